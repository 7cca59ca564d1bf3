// Cards and hands as DOM nodes, shared by the replay viewer (viewer.js) and the web arena's card table
// (table.js), and cards named in text as they are drawn ("10\u2663", never the protocol's "TC"), in the
// narration's words (referee/results/narrate.py PHRASES, which a page gives as JSON). Text is only ever set with
// textContent.
"use strict";

const DurakCards = (() => {
  const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
  const RED = { D: true, H: true };

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function card(code) {
    const node = el("span", "card" + (RED[code[1]] ? " red" : " black"));
    node.dataset.card = code;  // the protocol's name, for scripts; a person is shown the drawn one
    const rank = code[0] === "T" ? "10" : code[0];
    node.title = rank + SUITS[code[1]];
    node.append(el("span", "rank", rank), el("span", "suit", SUITS[code[1]]));
    return node;
  }

  function back() {
    return el("span", "card back");
  }

  function cards(text) {
    return text ? text.split(" ") : [];
  }

  // A hand: the face-up cards (space-separated), then backs up to ``size``.
  function hand(faceUp, size) {
    const node = el("div", "hand");
    const shown = cards(faceUp);
    for (const code of shown) node.append(card(code));
    for (let i = shown.length; i < size; i++) node.append(back());
    return node;
  }

  // The middle of the table into ``node``: the stock (the trump card under it while it lasts), the table's pairs,
  // the Fool's Fool pile (``pile`` undefined: none) and the discard count.
  function centre(node, { trump, trumpSuit, stock, pairs, pile, pileLimit, discard }) {
    node.textContent = "";
    const stack = el("div", "stock");
    stack.dataset.stock = String(stock || 0);
    if (trump && stock > 0) {
      const shown = card(trump);
      shown.classList.add("trump");
      shown.title = "trump: " + shown.title;
      stack.append(shown, back());
    }
    stack.append(el("span", "label", "stock " + (stock || 0) + " \u00b7 trump " + SUITS[trumpSuit]));
    const table = el("div", "tablecards");
    for (const pair of pairs || []) {
      const p = el("div", "pair");
      p.append(card(pair[0]));
      if (pair[1]) p.append(card(pair[1]));
      table.append(p);
    }
    table.dataset.cards = (pairs || []).map((p) => p.filter(Boolean).join(" ")).join(" ");
    node.append(stack, table);
    if (pile !== undefined && pile !== null) {
      const box = el("div", "chainpile");
      box.append(el("span", "label", "pile" + (pileLimit ? " (size " + pileLimit + ")" : "")));
      for (const code of pile) box.append(card(code));
      box.dataset.cards = pile.join(" ");
      node.append(box);
    }
    const discarded = el("div", "discard", "discard " + (discard || 0));
    discarded.dataset.discard = String(discard || 0);
    node.append(discarded);
  }

  // A card as it is drawn ("10\u2663"): the text of card()'s own drawing, so that the two cannot differ.
  function cardName(code) {
    return card(code).textContent;
  }

  // Text with cards in it: ``parts`` are strings and {card: code}, or arrays of codes (a space between cards).
  function said(parts) {
    const out = [];
    for (const part of parts) {
      if (Array.isArray(part)) part.forEach((code, i) => { if (i) out.push(" "); out.push({ card: code }); });
      else out.push(part);
    }
    return out;
  }

  // ``parts`` into ``node``: text as text, each card its name as drawn, red suits red (class cardname).
  function render(node, parts) {
    for (const part of parts) {
      if (typeof part === "string") node.append(document.createTextNode(part));
      else {
        const span = el("span", "cardname " + (RED[part.card[1]] ? "red" : "black"), cardName(part.card));
        span.dataset.card = part.card;
        node.append(span);
      }
    }
    return node;
  }

  // An action string in words, its cards as drawn ("beat J\u2663 with Q\u2663").
  function actionParts(text) {
    const [kind, ...codes] = text.split(" ");
    switch (kind) {
      case "beat": return said(["beat ", [codes[0]], " with ", [codes[1]]]);
      case "beat-top": return said(["beat the top card with ", codes]);
      case "throw": return said(["throw in ", codes]);
      case "transfer": return said(["transfer with ", codes]);
      default: return said(codes.length ? [kind + " ", codes] : [kind]);
    }
  }

  // ``phrases[key]`` with its {field}s filled, as parts: a field's value is a name or number (text), an array of
  // card codes (drawn as cards), or {parts} (already parts).
  function phrase(phrases, key, fields) {
    const out = [];
    for (const piece of phrases[key].split(/(\{\w+\})/)) {
      const field = /^\{(\w+)\}$/.exec(piece);
      if (field === null) {
        if (piece) out.push(piece);
        continue;
      }
      const value = fields[field[1]];
      if (value && value.parts) out.push(...value.parts);
      else if (Array.isArray(value)) out.push(...said([value]));
      else out.push(String(value));
    }
    return out;
  }

  // One event (the protocol's, PROTOCOL.md) as parts, in the narration's words (``phrases``); ``who`` gives a
  // seat's name as shown.
  function eventParts(e, who, phrases) {
    const say = (key, fields) => phrase(phrases, key, fields);
    switch (e.type) {
      case "bout": return say("bout", { attacker: who(e.attacker), defender: who(e.defender) });
      case "action": {
        const [kind, ...codes] = e.action.split(" ");
        if (kind === "beat") return say("action.beat", { seat: who(e.seat), target: [codes[0]], card: [codes[1]] });
        return say("action." + kind, { seat: who(e.seat), cards: codes });
      }
      case "draw":
        if (e.cards) return say("draw.seen", { seat: who(e.seat), count: e.count, cards: e.cards });
        return say(e.shown && e.shown.length ? "draw.trump" : "draw", { seat: who(e.seat), count: e.count,
          shown: e.shown || [] });
      case "bout_end": return say(e.outcome === "taken" ? "bout_end.taken" : "bout_end.beaten",
        { defender: who(e.defender), cards: e.cards });
      case "out": return say("out", { seats: e.seats.map(who).join(" and "), place: e.place });
      case "ladder": return say("ladder", { starter: who(e.starter), piles: { parts: e.piles.flatMap((code, s) =>
        [...(s ? [", "] : []), who(s) + " ", { card: code }]) } });
      case "place": return say("place", { seat: who(e.seat), card: [e.card], onto: who(e.onto) });
      case "keep": return say(e.card ? "keep" : "keep.hidden", { seat: who(e.seat), card: e.card ? [e.card] : [] });
      case "ladder_end": return say("ladder_end", { hand_sizes: e.hand_sizes.map((n, s) => who(s) + " " + n)
        .join(", ") });
      case "pile_take": return say("pile_take", { seat: who(e.seat), card: [e.card] });
      case "pile_discard": return say("pile_discard", { cards: e.cards });
      default: return [e.type];
    }
  }

  // Where each other seat sits round the table, in play order from the one at the bottom: with three or more,
  // the next seat on the left, the last on the right, the others across the top, left to right.
  function places(others) {
    return Array.from({ length: others }, (_, i) =>
      (others >= 3 && i === 0 ? "left" : others >= 3 && i === others - 1 ? "right" : "top"));
  }

  return { SUITS, el, card, back, cards, hand, centre, cardName, said, render, actionParts, phrase, eventParts,
    places };
})();
