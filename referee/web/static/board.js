// The live board: polls /api/board and rewrites the table's cells as text (never markup).
"use strict";

(() => {
  const table = document.getElementById("board-body");
  const fitted = document.getElementById("board-fitted");
  const seconds = Number(document.body.dataset.poll || "5");

  function cell(row, text) {
    const td = document.createElement("td");
    td.textContent = text;
    row.append(td);
    return td;
  }

  function link(row, href, text) {
    const td = document.createElement("td");
    const a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    td.append(a);
    row.append(td);
  }

  function draw(board) {
    const rows = board.lines.map((line) => {
      const row = document.createElement("tr");
      cell(row, String(line.rank));
      link(row, "/bots/" + encodeURIComponent(line.bot), line.version);
      link(row, "/authors/" + encodeURIComponent(line.author), line.author);
      cell(row, line.elo.toFixed(1));
      cell(row, line.sd === null ? "-" : line.sd.toFixed(1));
      cell(row, String(line.games));
      cell(row, line.state);
      return row;
    });
    table.replaceChildren(...rows);
    fitted.textContent = board.fitted || "not yet";
    document.body.dataset.polled = String(Number(document.body.dataset.polled || "0") + 1);
  }

  async function poll() {
    try {
      const answer = await fetch("/api/board", { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (answer.ok) draw(await answer.json());
    } finally {
      setTimeout(poll, seconds * 1000);
    }
  }

  setTimeout(poll, seconds * 1000);
  document.body.dataset.ready = "1";
})();
