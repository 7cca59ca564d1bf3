// The web arena's card table: a person's seat, drawn only from that seat's protocol messages (PROTOCOL.md:
// game, request, game_over: the same bytes a bot at that seat is sent). It knows no rules: the hand, the
// table and the counts come from the latest view (at the end, the seat's view after the last events, which the
// server sends with the game's end: the game over message carries none), and the only actions offered are the
// request's ``legal`` strings, each sent back unchanged. The hand is shown in the order the server sends
// (``handOrder``: referee/hand_order.py, the terminal's order too). Cards are drawn by cards.js (loaded first),
// and named in buttons and the log as drawn ("10\u2663", never the protocol's "TC"); text is only ever set with
// textContent.
"use strict";

const DurakTable = (() => {
  const { el, card, back, centre, cardName, render, actionParts, eventParts, places } = DurakCards;
  const OPPONENT_HAND_PX = 172;  // the width an opponent's cards fan out in (web.css: .card-table .opponent)
  const CARD_PX = 36;
  const KNOWN_STEP_PX = 18;  // the least of a face-up card that shows (its rank and suit sit in that corner)

  function cardsOf(action) {
    return action.split(" ").slice(1);
  }

  function clockText(ms) {
    const s = Math.max(0, Math.ceil(ms / 1000));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }

  // Parts (cards.js: said, eventParts) as plain text, each card its name as drawn.
  function plain(parts) {
    return parts.map((p) => (typeof p === "string" ? p : cardName(p.card))).join("");
  }

  // The seats' names as shown: a name two seats share gets its seat number.
  function shownNames(names) {
    return names.map((n, s) => (names.filter((m) => m === n).length > 1 ? n + " (seat " + s + ")" : n));
  }

  function eventLine(e, names, phrases) {
    const shown = shownNames(names);
    return plain(eventParts(e, (s) => (shown[s] === undefined ? "seat " + s : shown[s]), phrases));
  }

  class Table {
    // options.send(text) -> Promise: sends a legal action string; options.replay: the replay's address;
    // options.handOrder: the server's key to the order a hand is shown in (referee/hand_order.py);
    // options.phrases: the narration's words for each event (referee/results/narrate.py PHRASES).
    constructor(root, options) {
      this.root = root;
      this.options = options || {};
      this.start = null;
      this.view = null;
      this.request = null;
      this.over = null;
      this.answered = null;
      this.selected = new Set();
      this.events = [];
      this.deadline = null;
      this.build();
      this.ticker = setInterval(() => this.tick(), 250);
    }

    build() {
      this.root.textContent = "";
      this.root.classList.add("viewer", "card-table");
      this.head = el("div", "vhead");
      this.seatsTop = el("div", "seats top");
      this.seatsLeft = el("div", "seats left");
      this.centre = el("div", "centre");
      this.seatsRight = el("div", "seats right");
      this.seatsBottom = el("div", "seats bottom");
      this.felt = el("div", "felt");
      this.felt.append(this.seatsTop, this.seatsLeft, this.centre, this.seatsRight, this.seatsBottom);
      this.seating = el("div", "seating");
      this.status = el("div", "now");
      this.clock = el("span", "clock");
      this.actions = el("div", "controls actions");
      this.result = el("div", "result");
      this.log = el("ol", "log");
      const side = el("div", "side");
      side.append(el("h3", "", "Events"), this.log);
      const left = el("div", "vleft");
      left.append(this.felt, this.seating, this.status, this.actions, this.result);
      const main = el("div", "vmain");
      main.append(left, side);
      this.root.append(this.head, main);
    }

    // Take the next protocol messages (parsed), in order; ``clockMs``: the time left on the open request as the
    // server counts it (after a reload the request is older than this page); ``finalView``: the seat's view once
    // the game is over (the server's; the game over message carries only the last events).
    feed(messages, clockMs, finalView) {
      for (const m of messages) {
        if (m.type === "game") { this.start = m; this.view = m.view; }
        else if (m.type === "request") { this.request = m; this.view = m.view; this.events.push(...(m.events || [])); }
        else if (m.type === "game_over") { this.over = m; this.request = null; this.events.push(...(m.events || [])); }
      }
      if (this.over && finalView) this.view = finalView;
      if (this.request && this.answered !== this.request.id) {
        const left = clockMs === undefined || clockMs === null ? this.request.time_ms : clockMs;
        this.deadline = performance.now() + left;
      } else {
        this.deadline = null;
      }
      this.draw();
    }

    myTurn() {
      return this.request !== null && this.answered !== this.request.id && !this.over;
    }

    // The name of seat ``s`` as shown (with its seat number where two seats share a name).
    who(s) {
      const shown = shownNames(this.start ? this.start.names : []);
      return shown[s] === undefined ? "seat " + s : shown[s];
    }

    // ``cards`` by the server's key: suit (in its order for this trump suit), then rank.
    inHandOrder(cards) {
      const key = this.options.handOrder;
      const suits = key && this.view ? key.suits[this.view.trump_suit] : null;
      if (!suits) return cards;
      const place = (c) => suits.indexOf(c[1]) * key.ranks.length + key.ranks.indexOf(c[0]);
      return [...cards].sort((a, b) => place(a) - place(b));
    }

    draw() {
      if (!this.start || !this.view) return;
      const g = this.start;
      const v = this.view;
      this.root.dataset.seat = String(g.seat);
      this.root.dataset.game = g.game;
      this.head.textContent = "";
      this.head.append(el("h2", "vtitle", g.game), el("span", "vmode", g.rules.variant + ", " +
        g.players + " players, " + g.rules.deck + " cards, you are " + g.names[g.seat] + " at seat " + g.seat));
      for (const row of [this.seatsTop, this.seatsLeft, this.seatsRight, this.seatsBottom]) row.textContent = "";
      const where = places(g.players - 1);
      const rows = { top: this.seatsTop, left: this.seatsLeft, right: this.seatsRight };
      this.felt.classList.toggle("sides", where.includes("left"));
      for (let k = 1; k < g.players; k++) {
        const box = this.seat((g.seat + k) % g.players, v);
        box.dataset.order = String(k);
        box.dataset.place = where[k - 1];
        rows[where[k - 1]].append(box);
      }
      this.seatsBottom.append(this.seat(g.seat, v));
      this.drawSeating();
      this.drawCentre(v);
      this.drawStatus(v);
      this.drawActions();
      this.drawResult();
      this.drawLog();
      this.root.dataset.turn = this.myTurn() ? "1" : "0";
      this.root.dataset.over = this.over ? "1" : "0";
    }

    // The play order, from the person round the table and back.
    drawSeating() {
      const g = this.start;
      const order = Array.from({ length: g.players }, (_, k) => (g.seat + k) % g.players);
      this.seating.textContent = "";
      this.seating.append(el("span", "label", "Play order (each attacks the next, on their left): "));
      for (const s of order) {
        const name = el("bdi", "", s === g.seat ? "you" : g.names[s]);
        name.dataset.seat = String(s);
        this.seating.append(name, el("span", "", " (seat " + s + ") \u2192 "));
      }
      this.seating.append(el("span", "", "you"));
    }

    seat(s, v) {
      const g = this.start;
      const mine = s === v.seat;
      const box = el("div", "seat " + (mine ? "me" : "opponent"));
      box.dataset.seat = String(s);
      if (v.to_move === s && !this.over) box.classList.add("to-move");
      const name = el("div", "name");
      name.append(el("span", "seatno", "seat " + s + " \u00b7 "), el("bdi", "", g.names[s]));
      const size = v.hand_sizes[s];
      const roles = mine ? [] : [size + (size === 1 ? " card" : " cards")];
      if (s === g.dealer) roles.push("dealer");
      if (v.attacker === s) roles.push("attacker");
      if (v.defender === s) roles.push(v.taking ? "defender, taking" : "defender");
      const place = (v.out || []).findIndex((group) => group.includes(s));
      if (place >= 0) { roles.push("out, place " + (place + 1)); box.classList.add("out"); }
      if (v.chases) roles.push("chases " + v.chases[s]);
      const meta = el("div", "meta", roles.join(" \u00b7 ") || "\u00a0");
      box.append(name, meta);
      box.dataset.count = String(v.hand_sizes[s]);
      box.append(mine ? this.ownHand(v) : this.otherHand(s, v));
      return box;
    }

    ownHand(v) {
      const hand = el("div", "hand");
      const playable = new Set(this.myTurn() ? this.request.legal.flatMap(cardsOf) : []);
      for (const code of this.inHandOrder(v.hand)) {
        const node = card(code);
        if (playable.has(code)) {
          node.classList.add("playable");
          node.tabIndex = 0;
          node.addEventListener("click", () => this.toggle(code));
          node.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") this.toggle(code); });
        }
        if (this.selected.has(code)) node.classList.add("selected");
        hand.append(node);
      }
      return hand;
    }

    // An opponent's cards, fanned into a fixed width (the box keeps its size and place whatever the count):
    // the cards everyone saw them pick up face up, then the backs.
    otherHand(s, v) {
      const hand = el("div", "hand");
      const known = this.inHandOrder(v.known[s] || []);
      const backs = Math.max(0, v.hand_sizes[s] - known.length);
      const gaps = known.length + backs - 1;
      const room = OPPONENT_HAND_PX - CARD_PX;
      let step = gaps > 0 ? Math.min(CARD_PX + 2, room / gaps) : 0;
      let backStep = step;
      if (known.length && step < KNOWN_STEP_PX) {  // face-up cards first: the backs give up their room
        step = Math.min(KNOWN_STEP_PX, room / Math.max(1, gaps));
        backStep = backs > 1 ? Math.max(1, (room - step * known.length) / (backs - 1)) : 0;
      }
      const nodes = [...known.map((code) => card(code)), ...Array.from({ length: backs }, () => back())];
      nodes.forEach((node, i) => {
        if (i) node.style.marginLeft = ((i <= known.length ? step : backStep) - CARD_PX) + "px";
        hand.append(node);
      });
      if (known.length) hand.title = "known: " + known.map(cardName).join(" ");
      return hand;
    }

    drawCentre(v) {
      centre(this.centre, { trump: v.trump, trumpSuit: v.trump_suit, stock: v.stock, pairs: v.table,
        pile: v.pile_limit === null || v.pile_limit === undefined ? undefined : v.pile, pileLimit: v.pile_limit,
        discard: (v.discard || []).length });
    }

    drawStatus(v) {
      const g = this.start;
      this.status.textContent = "";
      if (this.over) {
        this.status.append(el("strong", "", "The game is over."));
        return;
      }
      if (this.myTurn()) this.status.append(el("strong", "", "Your move"), el("span", "", " \u00b7 "), this.clock);
      else if (v.to_move !== null && v.to_move !== undefined && v.to_move !== g.seat) {
        this.status.append(el("span", "", "waiting for "), el("bdi", "", this.who(v.to_move)));
      } else this.status.append(el("span", "", "waiting"));
      this.tick();
    }

    drawActions() {
      this.actions.textContent = "";
      if (!this.myTurn()) return;
      const chosen = [...this.selected];
      for (const text of this.request.legal) {
        const used = cardsOf(text);
        if (!chosen.every((code) => used.includes(code))) continue;
        const b = render(el("button", "action"), actionParts(text));
        b.type = "button";
        b.dataset.action = text;
        b.addEventListener("click", () => this.choose(text));
        this.actions.append(b);
      }
    }

    drawResult() {
      const r = this.result;
      r.textContent = "";
      if (!this.over) return;
      const res = this.over.result;
      r.dataset.end = res.end;
      r.dataset.fools = res.fools.join(",");
      const fools = res.fools.map((s) => this.who(s)).join(", ");
      r.append(el("strong", "", "Result: "), el("span", "told", res.fools.length ? "the fool: " + fools : "a draw"));
      if (res.end !== "fool" && res.end !== "draw") r.append(el("span", "", " (" + res.end + ")"));
      if (res.reason) r.append(el("div", "reason", res.reason));
      if (this.options.replay) {
        const a = el("a", "replay", "open the replay");
        a.href = this.options.replay;
        r.append(el("span", "", " \u00b7 "), a);
      }
    }

    drawLog() {
      this.log.textContent = "";
      const who = (s) => this.who(s);
      for (const e of this.events) this.log.append(render(el("li"), eventParts(e, who, this.options.phrases)));
      const box = this.log.parentElement;
      if (box) box.scrollTop = box.scrollHeight;
    }

    tick() {
      if (this.deadline === null) { this.clock.textContent = ""; return; }
      const left = this.deadline - performance.now();
      this.clock.textContent = clockText(left);
      this.clock.dataset.ms = String(Math.max(0, Math.round(left)));
      this.clock.classList.toggle("low", left < 10000);
    }

    toggle(code) {
      if (this.selected.has(code)) this.selected.delete(code);
      else this.selected.add(code);
      // A selection no legal action holds starts again from this card.
      if (!this.request.legal.some((t) => [...this.selected].every((c) => cardsOf(t).includes(c)))) {
        this.selected = new Set([code]);
      }
      this.draw();
    }

    choose(text) {
      if (!this.myTurn() || !this.request.legal.includes(text)) return;
      const id = this.request.id;
      this.answered = id;
      this.selected.clear();
      this.deadline = null;
      this.draw();
      Promise.resolve(this.options.send ? this.options.send(text, id) : null).catch(() => {
        if (this.request && this.request.id === id && this.answered === id) { this.answered = null; this.draw(); }
      });
    }
  }

  return { Table, eventLine, actionParts, cardName };
})();
