// The live board. Its rows are drawn once, by the server (board.html): every few seconds this fetches the page
// again (revalidated by its ETag: a 304 while nothing changed) and puts the new #board in place of the old, and
// fills the live cells (each version's last game, whether it plays now, its games of the last hour, the board's)
// from the JSON at #board's data-live, as text. Addresses come from the server (data-live, each line's last_url),
// never built here.
"use strict";

(() => {
  const seconds = Number(document.body.dataset.poll || "5");
  let live = null; // the latest live answer, put in again when the board is replaced

  function count(name) {
    document.body.dataset[name] = String(Number(document.body.dataset[name] || "0") + 1);
  }

  function ago(now, then) {
    const minutes = Math.max(0, Math.round((Date.parse(now) - Date.parse(then)) / 60000));
    if (Number.isNaN(minutes)) return then;
    if (minutes < 60) return minutes + " min ago";
    const hours = Math.round(minutes / 60);
    return hours < 48 ? hours + " h ago" : Math.round(hours / 24) + " days ago";
  }

  function lastGame(cell, line, now) {
    if (line.last_game === null || line.last_url === null) {
      cell.textContent = "none yet";
      return;
    }
    const a = document.createElement("a");
    a.href = line.last_url;
    a.textContent = "#" + line.last_game;
    a.title = line.last_played || "";
    cell.replaceChildren(a, document.createTextNode(" " + (line.last_played ? ago(now, line.last_played) : "")));
  }

  function fill() {
    const board = document.getElementById("board");
    if (live === null || board === null) return;
    document.getElementById("live-hour").textContent = String(live.games_last_hour);
    document.getElementById("live-groups").textContent = String(live.groups_playing);
    const lines = new Map(live.lines.map((line) => [line.version, line]));
    for (const row of board.querySelectorAll("tr[data-version]")) {
      const line = lines.get(row.dataset.version);
      if (line === undefined) continue;
      lastGame(row.querySelector(".last-game"), line, live.now);
      const playing = row.querySelector(".playing");
      playing.textContent = line.playing ? "playing" : "";
      row.querySelector(".hour-games").textContent = String(line.games_last_hour);
      row.classList.toggle("is-playing", line.playing);
    }
    count("lived");
  }

  async function fetchLive() {
    const board = document.getElementById("board");
    const answer = await fetch(board.dataset.live, { credentials: "same-origin",
      headers: { Accept: "application/json" } });
    if (answer.ok) {
      live = await answer.json();
      fill();
    }
  }

  async function fetchBoard() {
    const answer = await fetch(location.pathname, { credentials: "same-origin", cache: "no-cache",
      headers: { Accept: "text/html" } });
    if (!answer.ok) return;
    const fresh = new DOMParser().parseFromString(await answer.text(), "text/html").getElementById("board");
    const board = document.getElementById("board");
    if (fresh !== null && board !== null && fresh.innerHTML !== board.dataset.drawn) {
      const drawn = fresh.innerHTML;
      board.replaceWith(document.adoptNode(fresh));
      fresh.dataset.drawn = drawn;
      fill();
    }
    count("polled");
  }

  async function poll() {
    try {
      await Promise.all([fetchBoard(), fetchLive()]);
    } finally {
      setTimeout(poll, seconds * 1000);
    }
  }

  const board = document.getElementById("board");
  board.dataset.drawn = board.innerHTML;
  fetchLive().finally(() => {
    document.body.dataset.ready = "1";
    setTimeout(poll, seconds * 1000);
  });
})();
