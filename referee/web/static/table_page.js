// The card table page: asks the server for the seat's messages since the last it has (all of them after a
// reload), feeds them to the table (table.js), and posts the person's chosen legal string with the session's
// CSRF token. It asks again soon after a move (the bots answer fast) and stops once the game is over.
"use strict";

(() => {
  const data = JSON.parse(document.getElementById("table-data").textContent);
  const root = document.getElementById("table");
  const POLL_MS = 400;  // while the bots move
  const MY_TURN_POLL_MS = 2000;  // while the person thinks, only a timeout's game over can come
  const AFTER_MOVE_MS = 100;
  let since = 0;
  let table = null;
  let timer = null;
  let asking = false;

  function schedule(ms) {
    clearTimeout(timer);
    timer = setTimeout(poll, ms);
  }

  function send(text, id) {
    return post(data.moves, { request: id, action: text }).then((response) => {
      if (!response.ok) throw new Error("move refused: " + response.status);
      if (!asking) schedule(AFTER_MOVE_MS);
    });
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": data.csrf },
      body: JSON.stringify(body),
    });
  }

  document.getElementById("resign").addEventListener("click", () => {
    post(data.resign, {}).then(() => schedule(AFTER_MOVE_MS));
  });

  async function poll() {
    asking = true;
    let answer = null;
    try {
      const response = await fetch(data.messages + "?since=" + since, { credentials: "same-origin" });
      if (response.ok) answer = await response.json();
    } catch (e) {
      answer = null;  // a dropped connection: ask again
    }
    asking = false;
    if (answer) {
      since = answer.next;
      if (!table && answer.messages.length) table = new DurakTable.Table(root, { send, replay: null });
      if (table) {
        table.options.replay = answer.replay;
        table.feed(answer.messages.map((line) => JSON.parse(line)), answer.clock_ms);
      } else {
        root.textContent = answer.status === "over" ? "" : "Waiting for the daemon to seat the bots and deal\u2026";
      }
      if (answer.reason) {
        const why = document.createElement("p");
        why.className = "error";
        why.textContent = "This table ended without a game: " + answer.reason;
        root.append(why);
      }
      root.dataset.status = answer.status;
      document.body.dataset.ready = "1";
      if (answer.status === "over") {  // the daemon wrote every message before it ended the table
        document.getElementById("resign").hidden = true;
        return;
      }
    }
    schedule(table && table.myTurn() ? MY_TURN_POLL_MS : POLL_MS);
  }

  poll();
})();
