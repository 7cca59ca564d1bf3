// Cards and hands as DOM nodes, shared by the replay viewer (viewer.js) and the web arena's card table
// (table.js). Text is only ever set with textContent.
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
    node.dataset.card = code;
    node.title = code;
    node.append(el("span", "rank", code[0] === "T" ? "10" : code[0]), el("span", "suit", SUITS[code[1]]));
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

  return { SUITS, el, card, back, cards, hand, centre };
})();
