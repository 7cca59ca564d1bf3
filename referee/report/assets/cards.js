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

  return { SUITS, el, card, back, cards, hand };
})();
