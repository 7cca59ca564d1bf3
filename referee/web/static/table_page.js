// The card table page: follows the seat's messages from the first (all of them after a reload) on the table's
// event stream (server-sent events: each message an event whose id is its number, then an ``state`` event with
// the status and the clock), feeds them to the table (table.js), and posts the person's chosen legal string with
// the session's CSRF token. The browser reconnects a dropped stream itself, from the last message it had
// (Last-Event-ID). Only if the stream fails again and again does the page poll the messages route instead: often
// while the bots move, soon after a move, seldom while the person thinks. Both stop once the game is over.
"use strict";

(() => {
  const data = JSON.parse(document.getElementById("table-data").textContent);
  const phrases = JSON.parse(document.getElementById("narration").textContent);  // the replay's words
  const root = document.getElementById("table");
  const POLL_MS = 400;  // while the bots move
  const MY_TURN_POLL_MS = 2000;  // while the person thinks, only a timeout's game over can come
  const AFTER_MOVE_MS = 100;
  const STREAM_FAILURES = 3;  // failed stream connections in a row before the page polls instead
  const STREAM_RETRY_MS = 1000;
  let since = 0;  // the messages handed to the table
  let table = null;
  let timer = null;
  let asking = false;
  let source = null;
  let failures = 0;
  let batch = [];  // a stream's messages after ``since``, handed over with its next state event
  let over = false;

  function schedule(ms) {
    clearTimeout(timer);
    timer = setTimeout(poll, ms);
  }

  function polling() {
    return root.dataset.feed === "poll";
  }

  function send(text, id) {
    return post(data.moves, { request: id, action: text }).then((response) => {
      if (!response.ok) throw new Error("move refused: " + response.status);
      if (polling() && !asking) schedule(AFTER_MOVE_MS);
    });
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": data.csrf },
      body: JSON.stringify(body),
    });
  }

  // Resigning asks first: one click on "Resign" only asks whether to give the game up.
  const resign = document.getElementById("resign");
  const confirmBox = document.getElementById("resign-confirm");
  function confirming(shown) {
    confirmBox.hidden = !shown;
    resign.hidden = shown;
  }
  resign.addEventListener("click", () => { confirming(true); document.getElementById("resign-no").focus(); });
  document.getElementById("resign-no").addEventListener("click", () => { confirming(false); resign.focus(); });
  confirmBox.addEventListener("keydown", (e) => { if (e.key === "Escape") { confirming(false); resign.focus(); } });
  document.getElementById("resign-yes").addEventListener("click", () => {
    confirming(false);
    resign.disabled = true;
    post(data.resign, {}).then(() => { if (polling()) schedule(AFTER_MOVE_MS); })
      .finally(() => { resign.disabled = false; });
  });

  // The next messages (parsed) and the table's state, from either feed; true once the game is over.
  function take(messages, state) {
    if (!table && messages.length) {
      table = new DurakTable.Table(root, { send, replay: null, handOrder: data.hand_order, phrases });
    }
    if (table) {
      table.options.replay = state.replay;
      table.feed(messages, state.clock_ms, state.view);
    } else {
      root.textContent = state.status === "over" ? "" : "Waiting for the daemon to seat the bots and deal\u2026";
    }
    if (state.reason && !root.querySelector("p.reason")) {
      const why = document.createElement("p");
      why.className = "error reason";
      why.textContent = "This table ended without a game: " + state.reason;
      root.append(why);
    }
    root.dataset.status = state.status;
    document.body.dataset.ready = "1";
    if (state.status === "over") {  // the daemon wrote every message before it ended the table
      document.getElementById("resign-box").hidden = true;
      document.getElementById("analysis-box").hidden = !state.replay;  // a game stored: the person may ask
      over = true;
    }
    return over;
  }

  function stream() {
    root.dataset.feed = "stream";
    source = new EventSource(data.events + "?since=" + since, { withCredentials: true });
    source.addEventListener("open", () => { failures = 0; });
    source.addEventListener("message", (event) => batch.push(JSON.parse(event.data)));
    source.addEventListener("state", (event) => {
      const messages = batch;
      batch = [];
      since += messages.length;
      if (take(messages, JSON.parse(event.data))) source.close();
    });
    source.addEventListener("error", () => {
      if (over) return;
      failures += 1;
      if (failures < STREAM_FAILURES && source.readyState !== EventSource.CLOSED) return;  // it reconnects itself
      source.close();
      batch = [];  // a new stream or the poll sends the messages after ``since`` again
      if (failures < STREAM_FAILURES) setTimeout(stream, STREAM_RETRY_MS);  // refused: a new one, from ``since``
      else { root.dataset.feed = "poll"; poll(); }
    });
  }

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
      if (take(answer.messages.map((line) => JSON.parse(line)), answer)) return;
    }
    schedule(table && table.myTurn() ? MY_TURN_POLL_MS : POLL_MS);
  }

  if (typeof EventSource === "function") stream();
  else { root.dataset.feed = "poll"; poll(); }
})();
