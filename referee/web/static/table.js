// The web arena's card table: a person's seat, drawn only from that seat's protocol messages (PROTOCOL.md:
// game, request, game_over: the same bytes a bot at that seat is sent). It knows no rules: the hand, the
// table and the counts come from the latest view, and the only actions offered are the request's ``legal``
// strings, each sent back unchanged. Cards and hands come from cards.js (loaded first); text is only ever set
// with textContent.
"use strict";

const DurakTable = (() => {
  const { el, card, back, centre } = DurakCards;

  function cardsOf(action) {
    return action.split(" ").slice(1);
  }

  function clockText(ms) {
    const s = Math.max(0, Math.ceil(ms / 1000));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }

  // One event as a line of the log (names from the game message).
  function eventLine(e, names) {
    const who = (s) => names[s] === undefined ? "seat " + s : names[s];
    switch (e.type) {
      case "bout": return who(e.attacker) + " attacks " + who(e.defender);
      case "action": return who(e.seat) + ": " + e.action;
      case "draw": return who(e.seat) + " draws " + (e.cards ? e.cards.join(" ") : e.count + " card(s)") +
        (e.shown && e.shown.length && !e.cards ? " (" + e.shown.join(" ") + " shown)" : "");
      case "bout_end": return who(e.defender) + (e.outcome === "taken" ? " takes " : " beat off ") + e.cards.join(" ");
      case "out": return e.seats.map(who).join(", ") + " out, place " + e.place;
      case "ladder": return "ladder: piles " + e.piles.join(" ") + "; " + who(e.starter) + " starts";
      case "place": return who(e.seat) + " lays " + e.card + " on " + who(e.onto) + "'s pile";
      case "keep": return who(e.seat) + " keeps " + (e.card || "a card");
      case "ladder_end": return "the stock is empty: piles and kept cards go to hand";
      case "pile_take": return who(e.seat) + " takes " + e.card + " from the pile";
      case "pile_discard": return "the pile is discarded: " + e.cards.join(" ");
      default: return e.type;
    }
  }

  class Table {
    // options.send(text) -> Promise: sends a legal action string; options.replay: the replay's address.
    constructor(root, options) {
      this.root = root;
      this.options = options || {};
      this.start = null;
      this.view = null;
      this.request = null;
      this.over = null;
      this.answered = null;
      this.selected = new Set();
      this.lines = [];
      this.deadline = null;
      this.build();
      this.ticker = setInterval(() => this.tick(), 250);
    }

    build() {
      this.root.textContent = "";
      this.root.classList.add("viewer", "card-table");
      this.head = el("div", "vhead");
      this.seatsTop = el("div", "seats top");
      this.centre = el("div", "centre");
      this.seatsBottom = el("div", "seats bottom");
      const felt = el("div", "felt");
      felt.append(this.seatsTop, this.centre, this.seatsBottom);
      this.status = el("div", "now");
      this.clock = el("span", "clock");
      this.actions = el("div", "controls actions");
      this.result = el("div", "result");
      this.log = el("ol", "log");
      const side = el("div", "side");
      side.append(el("h3", "", "Events"), this.log);
      const left = el("div", "vleft");
      left.append(felt, this.status, this.actions, this.result);
      const main = el("div", "vmain");
      main.append(left, side);
      this.root.append(this.head, main);
    }

    // Take the next protocol messages (parsed), in order; ``clockMs``: the time left on the open request as the
    // server counts it (after a reload the request is older than this page).
    feed(messages, clockMs) {
      for (const m of messages) {
        if (m.type === "game") { this.start = m; this.view = m.view; }
        else if (m.type === "request") { this.request = m; this.view = m.view; this.addEvents(m.events); }
        else if (m.type === "game_over") { this.over = m; this.request = null; this.addEvents(m.events); }
      }
      if (this.request && this.answered !== this.request.id) {
        const left = clockMs === undefined || clockMs === null ? this.request.time_ms : clockMs;
        this.deadline = performance.now() + left;
      } else {
        this.deadline = null;
      }
      this.draw();
    }

    addEvents(events) {
      const names = this.start ? this.start.names : [];
      for (const e of events || []) this.lines.push(eventLine(e, names));
    }

    myTurn() {
      return this.request !== null && this.answered !== this.request.id && !this.over;
    }

    draw() {
      if (!this.start || !this.view) return;
      const g = this.start;
      const v = this.view;
      this.root.dataset.seat = String(g.seat);
      this.root.dataset.game = g.game;
      this.head.textContent = "";
      this.head.append(el("h2", "vtitle", g.game), el("span", "vmode", g.rules.variant + ", " +
        g.players + " players, " + g.rules.deck + " cards, you are " + g.names[g.seat]));
      this.seatsTop.textContent = "";
      this.seatsBottom.textContent = "";
      for (let k = 1; k <= g.players; k++) {
        const s = (g.seat + k) % g.players;
        (s === g.seat ? this.seatsBottom : this.seatsTop).append(this.seat(s, v));
      }
      this.drawCentre(v);
      this.drawStatus(v);
      this.drawActions();
      this.drawResult();
      this.drawLog();
      this.root.dataset.turn = this.myTurn() ? "1" : "0";
      this.root.dataset.over = this.over ? "1" : "0";
    }

    seat(s, v) {
      const g = this.start;
      const box = el("div", "seat");
      box.dataset.seat = String(s);
      if (v.to_move === s && !this.over) box.classList.add("to-move");
      const name = el("div", "name");
      name.append(el("bdi", "", g.names[s]));
      const roles = [];
      if (s === g.dealer) roles.push("dealer");
      if (v.attacker === s) roles.push("attacker");
      if (v.defender === s) roles.push(v.taking ? "defender, taking" : "defender");
      const place = (v.out || []).findIndex((group) => group.includes(s));
      if (place >= 0) roles.push("out");
      if (v.chases) roles.push("chases " + v.chases[s]);
      box.append(name, el("div", "meta", roles.join(" \u00b7 ")));
      const hand = el("div", "hand");
      if (s === v.seat) {
        const playable = new Set(this.myTurn() ? this.request.legal.flatMap(cardsOf) : []);
        for (const code of v.hand) {
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
      } else {
        const known = v.known[s] || [];
        for (const code of known) hand.append(card(code));
        for (let i = known.length; i < v.hand_sizes[s]; i++) hand.append(back());
      }
      box.dataset.count = String(v.hand_sizes[s]);
      box.append(hand);
      return box;
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
        this.status.append(el("span", "", "waiting for "), el("bdi", "", g.names[v.to_move]));
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
        const b = el("button", "action", text);
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
      const g = this.start;
      const res = this.over.result;
      r.dataset.end = res.end;
      r.dataset.fools = res.fools.join(",");
      const fools = res.fools.map((s) => g.names[s]).join(", ");
      r.append(el("strong", "", "Result: "), el("span", "told", res.fools.length ? "the fool: " + fools : "a draw"),
        el("span", "", " (" + res.end + ")"));
      if (res.reason) r.append(el("div", "reason", res.reason));
      if (this.options.replay) {
        const a = el("a", "replay", "open the replay");
        a.href = this.options.replay;
        r.append(el("span", "", " \u00b7 "), a);
      }
    }

    drawLog() {
      this.log.textContent = "";
      for (const line of this.lines) this.log.append(el("li", "", line));
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

  return { Table, eventLine };
})();
