// The card-table replay viewer: draws the frames the referee computed (referee/report/steps.py).
// It knows no rules: every hand, table, stock and pile is in the data. Text a bot controls (names,
// reasons, stderr) is only ever set with textContent. Cards and hands come from cards.js (loaded first).
"use strict";

const DurakViewer = (() => {
  const { el, card, cards, hand, centre } = DurakCards;

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

  // durak analyze --html: a judged decision (referee/cli/analyze.py with_marks) as chess annotates one.
  const MARK_SIGNS = { blunder: "??", mistake: "?", inaccuracy: "?!" };

  function markBadge(mark) {
    const node = el("span", "mark mark-" + mark, MARK_SIGNS[mark] + " " + mark);
    node.dataset.mark = mark;
    return node;
  }

  function judgement(j) {
    const node = el("span", "judged");
    node.dataset.mark = j.m || "";
    const loss = j.k === "exact" ? j.l.toFixed(2) + " exact" : j.l.toFixed(2) + " \u00b1 " + j.e.toFixed(2);
    node.append(el("span", "", "; "));
    if (j.m) node.append(markBadge(j.m), el("span", "", ": "));
    if (j.k === "forced") node.append(el("span", "", "forced"));
    else if (j.l > 0) node.append(el("span", "", "loss " + loss + ", best "), el("code", "best", j.b));
    else node.append(el("span", "", "the best move" + (j.k === "exact" ? " (exact)" : "")));
    return node;
  }

  class Viewer {
    constructor(root, game, options) {
      this.root = root;
      this.game = game;
      this.options = options || {};
      this.step = 0;
      this.timer = null;
      this.build();
      this.go(this.options.step || 0);
    }

    build() {
      const g = this.game;
      this.root.textContent = "";
      this.root.classList.add("viewer");
      this.root.dataset.game = g.game;
      this.root.dataset.steps = String(g.steps.length);
      this.root.dataset.view = g.seat === null ? "all" : "seat";
      const head = el("div", "vhead");
      const mode = g.seat === null ? "every hand shown" : "as " + g.names[g.seat] + " saw it";
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
      this.centre = el("div", "centre");
      this.seatsBottom = el("div", "seats bottom");
      const felt = el("div", "felt");
      felt.append(this.seatsTop, this.centre, this.seatsBottom);
      this.now = el("div", "now");
      this.result = el("div", "result");
      this.log = el("ol", "log");
      const side = el("div", "side");
      side.append(el("h3", "", "Events"), this.log);
      this.stderr = el("div", "stderr");
      const main = el("div", "vmain");
      const left = el("div", "vleft");
      left.append(felt, this.now, this.result);
      main.append(left, side);
      this.root.append(head, controls, main, this.stderr);
      this.root.tabIndex = 0;
      this.root.addEventListener("keydown", (e) => this.key(e));
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

    draw() {
      const g = this.game;
      const step = g.steps[this.step];
      const f = step.f;
      const players = g.names.length;
      const me = g.seat === null ? 0 : g.seat;
      this.seatsTop.textContent = "";
      this.seatsBottom.textContent = "";
      for (let k = 1; k <= players; k++) {
        const s = (me + k) % players;
        (s === me ? this.seatsBottom : this.seatsTop).append(this.seat(s, f, step));
      }
      this.drawCentre(f);
      this.now.textContent = "";
      if (step.w !== undefined) {
        this.now.append(el("strong", "", g.names[step.w]), el("span", "", " chose "), el("code", "chosen", step.a));
        if (step.u !== undefined) this.now.append(el("span", "", " in "), timeSpan(step.u));
        if (step.j !== undefined) this.now.append(judgement(step.j));
      } else {
        this.now.append(el("span", "", this.step === 0 ? "the deal" : "automatic"));
      }
      if (f.m !== null && f.m !== undefined) {
        this.now.append(el("span", "", "; to move: "), el("strong", "", g.names[f.m]));
      }
      this.now.dataset.toMove = f.m === null || f.m === undefined ? "" : String(f.m);
      this.drawResult();
      this.drawLog();
      this.drawStderr();
    }

    seat(s, f, step) {
      const g = this.game;
      const box = el("div", "seat");
      box.dataset.seat = String(s);
      const size = f.n ? f.n[s] : 0;
      const faceUp = f.h ? f.h[s] : "";
      box.dataset.cards = faceUp;
      box.dataset.count = String(size);
      if (f.m === s) box.classList.add("to-move");
      if (step.w === s) box.classList.add("chose");
      const name = el("div", "name");
      name.append(el("bdi", "", g.names[s]));
      const roles = [];
      if (s === g.dealer) roles.push("dealer");
      if (f.a === s) roles.push("attacker");
      if (f.d === s) roles.push(f.k ? "defender, taking" : "defender");
      const place = (f.o || []).findIndex((group) => group.includes(s));
      if (place >= 0) roles.push("out, place " + (1 + f.o.slice(0, place).reduce((n, grp) => n + grp.length, 0)));
      if (f.c) roles.push("chases " + f.c[s]);
      const meta = el("div", "meta", roles.join(" \u00b7 "));
      const stats = [];
      const t = g.times && g.times[s];
      if (t) stats.push(t.moves + " moves, median " + t.median_ms + " ms, max " + t.max_ms + " ms");
      if (g.strikes && g.strikes[s]) stats.push(g.strikes[s] + " strike(s)");
      box.append(name, meta);
      if (stats.length) box.append(el("div", "times", stats.join(" \u00b7 ")));
      if (f.lp) {
        const ladder = el("div", "ladder");
        const pile = el("div", "hand pile-cards");
        for (const code of cards(f.lp[s])) pile.append(card(code));
        ladder.append(el("span", "label", "ladder pile"), pile, el("span", "label", "kept"), hand(f.lk[s], f.ln[s]));
        box.append(ladder);
        box.dataset.cards = f.lk[s];
        box.dataset.count = String(f.ln[s]);
      } else {
        box.append(hand(faceUp, size));
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
      r.dataset.fools = g.result.fools.map((s) => g.names[s]).join(",");
      r.dataset.end = g.result.end;
      r.append(el("strong", "", "Result: "), el("span", "told", g.told));
      for (const v of g.verdicts) {
        const line = el("div", "verdict");
        line.append(el("strong", "", "verdict "), el("bdi", "", g.names[v.seat]), el("span", "", " " + v.kind),
          el("span", "reason", v.reason ? ": " + v.reason : ""));
        r.append(line);
      }
    }

    drawLog() {
      const g = this.game;
      this.log.textContent = "";
      let current = null;
      for (let i = 0; i <= this.step; i++) {
        g.steps[i].l.forEach((line, j) => {
          const item = el("li", i === this.step ? "current" : "", line);
          item.dataset.step = String(i);
          if (j === 0 && g.steps[i].u !== undefined) item.append(el("span", "", " "), timeSpan(g.steps[i].u));
          if (j === 0 && g.steps[i].j && g.steps[i].j.m) item.append(el("span", "", " "), markBadge(g.steps[i].j.m));
          item.addEventListener("click", () => this.go(i));
          this.log.append(item);
          if (i === this.step) current = current || item;
        });
      }
      const target = current || this.log.lastChild;
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
        summary.append(el("bdi", "", g.names[s]));
        box.append(summary, el("pre", "", shown.map((c) => c.text).join("")));
        this.stderr.append(box);
      });
    }
  }

  return { Viewer, card };
})();
