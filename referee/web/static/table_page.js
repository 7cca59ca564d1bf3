// The card table page: asks the server for the seat's messages since the last it has (all of them after a
// reload), feeds them to the table (table.js), and posts the person's chosen legal string with the session's
// CSRF token. It stops asking once the game is over and its replay is stored.
"use strict";

(() => {
  const data = JSON.parse(document.getElementById("table-data").textContent);
  const root = document.getElementById("table");
  const POLL_MS = 500;
  let since = 0;
  let table = null;

  function send(text, id) {
    return fetch(data.moves, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": data.csrf },
      body: JSON.stringify({ request: id, action: text }),
    }).then((response) => { if (!response.ok) throw new Error("move refused: " + response.status); });
  }

  function status(text) {
    root.dataset.status = text;
  }

  async function poll() {
    let answer = null;
    try {
      const response = await fetch(data.messages + "?since=" + since, { credentials: "same-origin" });
      if (response.ok) answer = await response.json();
    } catch (e) {
      answer = null;  // a dropped connection: ask again
    }
    if (answer) {
      since = answer.next;
      if (!table) table = new DurakTable.Table(root, { send, replay: null });
      table.options.replay = answer.replay;
      table.feed(answer.messages.map((line) => JSON.parse(line)), answer.clock_ms);
      status(answer.status);
      document.body.dataset.ready = "1";
      if (answer.status === "over") return;  // the daemon wrote every message before it ended the table
    }
    setTimeout(poll, POLL_MS);
  }

  poll();
})();
