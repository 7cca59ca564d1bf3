// The card-table replay viewer: draws the frames the referee computed (referee/report/steps.py).
// It knows no rules: every hand, table, stock and pile is in the data. Text a bot controls (names,
// reasons, stderr) is only ever set with textContent. Cards and hands come from cards.js (loaded first), and so
// do the events told in the narration's words (the page's ``narration`` element: referee/results/narrate.py
// PHRASES) with their cards as drawn. The seats sit round the felt in play order, as at the web's card table.
"use strict";

const DurakViewer = (() => {
  const { el, card, back, cards, centre, render, actionParts, eventParts, places } = DurakCards;
  const HAND_PX = 200;  // the width another seat's cards fan out in (style.css: .replay .fanned)
  const LADDER_PX = 164;  // the same in Fool's Fool's ladder, beside its labels (style.css: .replay .ladder)
  const CARD_PX = 36;
  const ROW_CARDS = 10;  // beyond this many, a hand fans out in two rows
  let phrases = null;

  // The narration's words, from the page (read once).
  function narration() {
    if (phrases === null) phrases = JSON.parse(document.getElementById("narration").textContent);
    return phrases;
  }

  // ``nodes`` (cards) fanned into ``rows`` of ``width`` px, so that a box keeps its size whatever the count.
  function fan(nodes, rows, width) {
    const node = el("div", "hand fanned");
    const per = Math.ceil(nodes.length / rows) || 1;
    for (let r = 0; r < rows; r++) {
      const row = el("div", "fan");
      const mine = nodes.slice(r * per, (r + 1) * per);
      const step = mine.length > 1 ? Math.min(CARD_PX + 2, (width - CARD_PX) / (mine.length - 1)) : 0;
      mine.forEach((n, i) => { if (i) n.style.marginLeft = (step - CARD_PX) + "px"; row.append(n); });
      node.append(row);
    }
    return node;
  }

  function handNodes(faceUp, size) {
    const shown = cards(faceUp);
    return [...shown.map(card), ...Array.from({ length: Math.max(0, size - shown.length) }, () => back())];
  }

  // A decision's time (microseconds, the referee's clock) in milliseconds, to about three digits.
  function moveTime(us) {
    const ms = us / 1000;
    return (ms < 1 ? ms.toFixed(3) : ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0)) + " ms";
  }

  function timeSpan(us) {
    const node = el("span", "move-time", moveTime(us));
    node.dataset.us = String(us);
    return node;
  }

  // durak analyze --html: a judged decision (referee/report/analysis_marks.py with_marks) as chess annotates one.
  const MARK_SIGNS = { blunder: "??", mistake: "?", inaccuracy: "?!" };

  function markBadge(mark) {
    const node = el("span", "mark mark-" + mark, MARK_SIGNS[mark] + " " + mark);
    node.dataset.mark = mark;
    return node;
  }

  function judgement(j) {
    const best = render(el("span", "best"), actionParts(j.b || ""));
    best.dataset.action = j.b || "";
    const node = el("span", "judged");
    node.dataset.mark = j.m || "";
    const loss = j.k === "exact" ? j.l.toFixed(2) + " exact" : j.l.toFixed(2) + " \u00b1 " + j.e.toFixed(2);
    node.append(el("span", "", "; "));
    if (j.m) node.append(markBadge(j.m), el("span", "", ": "));
    if (j.k === "forced") node.append(el("span", "", "forced"));
    else if (j.l > 0) node.append(el("span", "", "loss " + loss + ", best "), best);
    else node.append(el("span", "", "the best move" + (j.k === "exact" ? " (exact)" : "")));
    return node;
  }

  // The viewer drawing in each root: a new game opened in the same root stops the one before, whose key listener
  // would otherwise take every key first (and, having handled it, leave it to nobody else).
  const drawing = new WeakMap();

  class Viewer {
    constructor(root, game, options) {
      this.root = root;
      this.game = game;
      this.options = options || {};
      this.step = 0;
      this.timer = null;
      const before = drawing.get(root);
      if (before) before.stop();
      drawing.set(root, this);
      this.build();
      this.go(this.options.step || 0);
    }

    build() {
      const g = this.game;
      this.root.textContent = "";
      this.root.classList.add("viewer", "replay");
      this.root.dataset.game = g.game;
      this.root.dataset.steps = String(g.steps.length);
      this.root.dataset.view = g.seat === null ? "all" : "seat";
      const head = el("div", "vhead");
      const mode = g.seat === null ? "every hand shown" : "as " + this.who(g.seat) + " saw it";
      head.append(el("h2", "vtitle", g.title), el("span", "vmode", g.rules.variant + ", " +
        g.names.length + " players, " + g.deck + " cards, " + mode));
      const controls = el("div", "controls");
      const button = (label, title, action) => {
        const b = el("button", "", label);
        b.title = title;
        b.type = "button";
        b.addEventListener("click", action);
        controls.append(b);
        return b;
      };
      button("\u00ab start", "start (Home)", () => this.go(0));
      button("\u25c0", "back (\u2190)", () => this.go(this.step - 1));
      this.playButton = button("\u25b6 play", "play (space)", () => this.toggle());
      button("\u25b6", "next (\u2192)", () => this.go(this.step + 1));
      button("end \u00bb", "end (End)", () => this.go(g.steps.length - 1));
      this.speed = el("select", "speed");
      for (const s of [0.5, 1, 2, 4, 8, 16]) {
        const o = el("option", "", s + " steps/s");
        o.value = String(s);
        if (s === 2) o.selected = true;
        this.speed.append(o);
      }
      this.speed.addEventListener("change", () => { if (this.timer) { this.toggle(); this.toggle(); } });
      this.slider = el("input", "slider");
      this.slider.type = "range";
      this.slider.min = "0";
      this.slider.max = String(g.steps.length - 1);
      this.slider.addEventListener("input", () => this.go(Number(this.slider.value)));
      this.counter = el("span", "counter");
      controls.append(this.speed, this.slider, this.counter);
      this.seatsTop = el("div", "seats top");
      this.seatsLeft = el("div", "seats left");
      this.centre = el("div", "centre");
      this.seatsRight = el("div", "seats right");
      this.seatsBottom = el("div", "seats bottom");
      const felt = el("div", "felt");
      felt.classList.toggle("sides", places(g.names.length - 1).includes("left"));
      felt.append(this.seatsTop, this.seatsLeft, this.centre, this.seatsRight, this.seatsBottom);
      this.seating = this.drawSeating();
      this.now = el("div", "now");
      this.result = el("div", "result");
      this.log = el("ol", "log");
      const side = el("div", "side");
      side.append(el("h3", "", "Events"), this.log);
      this.stderr = el("div", "stderr");
      const main = el("div", "vmain");
      const left = el("div", "vleft");
      left.append(felt, this.seating, this.now, this.result);
      main.append(left, side);
      this.root.append(head, controls, main, this.stderr);
      this.root.tabIndex = 0;
      this.onKey = (e) => this.key(e);
      this.root.addEventListener("keydown", this.onKey);
    }

    // Stop drawing: its play timer and its keys (another viewer takes the root).
    stop() {
      if (this.timer) clearInterval(this.timer);
      this.timer = null;
      this.root.removeEventListener("keydown", this.onKey);
    }

    // A key for the viewer (its own, or the page's: see viewer_page.js); false when it is not one of its keys
    // or belongs to something else (a menu or a text field has the focus, a modifier is held, it was handled).
    key(e) {
      const tag = e.target && e.target.tagName;
      if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || tag === "SELECT" || tag === "TEXTAREA" ||
          (tag === "INPUT" && e.target.type !== "range")) return false;
      const moves = { ArrowLeft: -1, ArrowRight: 1 };
      if (e.key in moves) this.go(this.step + moves[e.key]);
      else if (e.key === "Home") this.go(0);
      else if (e.key === "End") this.go(this.game.steps.length - 1);
      else if (e.key === " ") this.toggle();
      else return false;
      e.preventDefault();
      return true;
    }

    toggle() {
      if (this.timer) {
        clearInterval(this.timer);
        this.timer = null;
        this.playButton.textContent = "\u25b6 play";
        return;
      }
      if (this.step >= this.game.steps.length - 1) this.go(0);
      this.playButton.textContent = "\u23f8 pause";
      this.timer = setInterval(() => {
        if (this.step >= this.game.steps.length - 1) this.toggle();
        else this.go(this.step + 1);
      }, 1000 / Number(this.speed.value));
    }

    go(index) {
      const last = this.game.steps.length - 1;
      this.step = Math.max(0, Math.min(last, Number(index) || 0));
      this.root.dataset.step = String(this.step);
      this.slider.value = String(this.step);
      this.counter.textContent = "step " + this.step + " / " + last;
      this.draw();
      if (this.options.onStep) this.options.onStep(this.step);
    }

    // A seat's name as text shows it: with its seat number where two seats share the name (game_data.py).
    who(s) {
      const shown = this.game.shown || this.game.names;
      return shown[s] === undefined ? "seat " + s : shown[s];
    }

    // The seat at the bottom: the one viewed, or seat 0 when every hand is shown.
    bottom() {
      return this.game.seat === null ? 0 : this.game.seat;
    }

    // The play order, from the seat at the bottom round the table and back.
    drawSeating() {
      const g = this.game;
      const players = g.names.length;
      const me = this.bottom();
      const line = el("div", "seating");
      line.append(el("span", "label", "Play order (each attacks the next, on their left): "));
      const name = (s) => {
        const node = el("bdi", "", s === g.seat ? "you" : g.names[s]);
        node.dataset.seat = String(s);
        return node;
      };
      for (let k = 0; k < players; k++) {
        const s = (me + k) % players;
        line.append(name(s), el("span", "", " (seat " + s + ") \u2192 "));
      }
      line.append(el("span", "", me === g.seat ? "you" : g.names[me]));
      return line;
    }

    draw() {
      const g = this.game;
      const step = g.steps[this.step];
      const f = step.f;
      const players = g.names.length;
      const me = this.bottom();
      const where = places(players - 1);
      const rows = { top: this.seatsTop, left: this.seatsLeft, right: this.seatsRight };
      for (const row of [this.seatsTop, this.seatsLeft, this.seatsRight, this.seatsBottom]) row.textContent = "";
      for (let k = 1; k < players; k++) {
        const box = this.seat((me + k) % players, f, step, false);
        box.dataset.order = String(k);
        box.dataset.place = where[k - 1];
        rows[where[k - 1]].append(box);
      }
      const mine = this.seat(me, f, step, true);
      mine.dataset.order = "0";
      mine.dataset.place = "bottom";
      this.seatsBottom.append(mine);
      this.drawCentre(f);
      this.now.textContent = "";
      if (step.w !== undefined) {
        const chosen = render(el("span", "chosen"), actionParts(step.a));
        chosen.dataset.action = step.a;
        chosen.title = step.a;  // what was sent
        this.now.append(el("strong", "", this.who(step.w)), el("span", "", " chose "), chosen);
        if (step.u !== undefined) this.now.append(el("span", "", " in "), timeSpan(step.u));
        if (step.j !== undefined) this.now.append(judgement(step.j));
      } else {
        this.now.append(el("span", "", this.step === 0 ? "the deal" : "automatic"));
      }
      if (f.m !== null && f.m !== undefined) {
        this.now.append(el("span", "", "; to move: "), el("strong", "", this.who(f.m)));
      }
      this.now.dataset.toMove = f.m === null || f.m === undefined ? "" : String(f.m);
      this.drawResult();
      this.drawLog();
      this.drawStderr();
    }

    // Seat ``s``'s box: the one at the bottom (``mine``) grows with its hand; the others keep their size and
    // place, their cards fanned into a fixed width.
    seat(s, f, step, mine) {
      const g = this.game;
      const box = el("div", "seat " + (mine ? "me" : "opponent"));
      box.dataset.seat = String(s);
      const size = f.n ? f.n[s] : 0;
      const faceUp = f.h ? f.h[s] : "";
      box.dataset.cards = faceUp;
      box.dataset.count = String(size);
      if (f.m === s) box.classList.add("to-move");
      if (step.w === s) box.classList.add("chose");
      const name = el("div", "name");
      name.append(el("span", "seatno", "seat " + s + " \u00b7 "), el("bdi", "", g.names[s]));
      name.title = "seat " + s + ": " + g.names[s];
      const roles = [];
      if (s === g.dealer) roles.push("dealer");
      if (f.a === s) roles.push("attacker");
      if (f.d === s) roles.push(f.k ? "defender, taking" : "defender");
      const place = (f.o || []).findIndex((group) => group.includes(s));
      if (place >= 0) roles.push("out, place " + (1 + f.o.slice(0, place).reduce((n, grp) => n + grp.length, 0)));
      if (f.c) roles.push("chases " + f.c[s]);
      const meta = el("div", "meta", roles.join(" \u00b7 ") || "\u00a0");
      const stats = [];
      const t = g.times && g.times[s];
      if (t) stats.push(t.moves + " moves, median " + t.median_ms + " ms, max " + t.max_ms + " ms");
      if (g.strikes && g.strikes[s]) stats.push(g.strikes[s] + " strike(s)");
      box.append(name, meta);
      if (stats.length) box.append(el("div", "times", stats.join(" \u00b7 ")));  // a game's, at every step
      if (f.lp) {  // Fool's Fool's ladder: the seat's pile, then the cards it kept
        const ladder = el("div", "ladder");
        const pile = fan(cards(f.lp[s]).map(card), 1, LADDER_PX);
        pile.classList.add("pile-cards");
        ladder.append(el("span", "label", "ladder pile"), pile, el("span", "label", "kept"),
          fan(handNodes(f.lk[s], f.ln[s]), 1, LADDER_PX));
        box.append(ladder);
        box.dataset.cards = f.lk[s];
        box.dataset.count = String(f.ln[s]);
      } else if (mine) {
        const shown = el("div", "hand");
        shown.append(...handNodes(faceUp, size));
        box.append(shown);
      } else {
        box.append(fan(handNodes(faceUp, size), size > ROW_CARDS ? 2 : 1, HAND_PX));
      }
      return box;
    }

    drawCentre(f) {
      const g = this.game;
      centre(this.centre, {
        trump: g.trump, trumpSuit: g.trump_suit, stock: f.s, pairs: f.t, pile: f.p, pileLimit: f.pl, discard: f.x,
      });
    }

    drawResult() {
      const g = this.game;
      const r = this.result;
      r.textContent = "";
      const done = this.step === g.steps.length - 1;
      this.root.dataset.atEnd = done ? "1" : "0";
      if (!done) return;
      r.dataset.fools = g.result.fools.map((s) => g.names[s]).join(",");  // the names, as stored
      r.dataset.end = g.result.end;
      r.append(el("strong", "", "Result: "), el("span", "told", g.told));
      for (const v of g.verdicts) {
        const line = el("div", "verdict");
        line.append(el("strong", "", "verdict "), el("bdi", "", this.who(v.seat)), el("span", "", " " + v.kind),
          el("span", "reason", v.reason ? ": " + v.reason : ""));
        r.append(line);
      }
    }

    // Step ``i``'s log lines, made once (a step's lines never change; the log shows steps 0 to the current one).
    logLines(i) {
      this.lines = this.lines || [];
      if (this.lines[i]) return this.lines[i];
      const step = this.game.steps[i];
      const who = (s) => this.who(s);
      this.lines[i] = step.ev.map((e, j) => {
        const item = render(el("li"), eventParts(e, who, narration()));
        if (e.type === "bout" || e.type === "ladder" || e.type === "ladder_end") item.classList.add("opens");
        item.dataset.step = String(i);
        if (j === 0 && step.u !== undefined) item.append(el("span", "", " "), timeSpan(step.u));
        if (j === 0 && step.j && step.j.m) item.append(el("span", "", " "), markBadge(step.j.m));
        item.addEventListener("click", () => this.go(i));
        return item;
      });
      return this.lines[i];
    }

    drawLog() {
      const shown = [];
      for (let i = 0; i <= this.step; i++) {
        for (const item of this.logLines(i)) {
          item.classList.toggle("current", i === this.step);
          shown.push(item);
        }
      }
      this.log.replaceChildren(...shown);
      const target = this.logLines(this.step)[0] || this.log.lastChild;
      const box = this.log.parentElement;  // scrolled on its own: the page stays where the reader put it
      if (target && box) box.scrollTop = Math.max(0, target.offsetTop - box.clientHeight / 2);
    }

    drawStderr() {
      // A chunk was written while its bot decided the move that produced events[after:]: it shows from
      // that move's step on; whatever came at game over shows at the end.
      const g = this.game;
      this.stderr.textContent = "";
      const start = this.step > 0 ? g.steps[this.step - 1].e : 0;
      const atEnd = this.step === g.steps.length - 1;
      (g.stderr || []).forEach((chunks, s) => {
        const shown = chunks.filter((c) => atEnd || c.after <= start);
        if (!shown.length) return;
        const box = el("details", "stderr-seat");
        box.open = true;
        const summary = el("summary", "", "stderr of ");
        summary.append(el("bdi", "", this.who(s)));
        box.append(summary, el("pre", "", shown.map((c) => c.text).join("")));
        this.stderr.append(box);
      });
    }
  }

  return { Viewer, card };
})();
