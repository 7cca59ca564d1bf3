#!/usr/bin/env node
// A Durak bot for node, without dependencies: one JSON object per line on stdin and on stdout.
//
//   .venv/bin/durak play "node sample_bots/js/bot.js" "{python} sample_bots/python/random_bot.py"
//
// Strategy: give every legal action a cost, the worth of the card it gives up (rank, +100 for a
// trump), and play the cheapest; "take" and "pass" have fixed costs, so the bot takes rather than
// beat with a high trump and passes rather than throw in a trump. The bot only ever answers one
// of the strings in "legal". Debug output must go to stderr: stdout is the protocol.
//
// Crash mode, for tests: with the environment variable DURAK_SAMPLE_CRASH=1 it throws at its first
// request (node prints "Error: sample crash: ..." and the stack on stderr, and exits 1).
'use strict';

const readline = require('readline');

const RANKS = '23456789TJQKA'; // T is the ten
const TRUMP_BONUS = 100;
const LONG_GAME = 250; // own decisions in one game
let moves = 0; // this bot's decisions in the current game
let random = seeded(0); // reseeded from each game's "seed": the same game, the same choices

// mulberry32: a small seeded generator of floats in [0, 1). The game's seed may exceed 2^53, where
// JSON.parse rounds it; it still rounds the same way every time, which is all a reseed needs.
function seeded(seed) {
  let state = seed % 4294967296 >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function worth(card, trumpSuit) {
  return RANKS.indexOf(card[0]) + (card[1] === trumpSuit ? TRUMP_BONUS : 0);
}

// [cost, tie-break]: lower is better; among equal costs, play more cards at once.
function cost(action, view) {
  const [kind, ...cards] = action.split(' ');
  if (kind === 'take') return [TRUMP_BONUS + RANKS.indexOf('T'), 0]; // beat with trumps below the ten only
  if (kind === 'pass') return [view.stock > 0 ? TRUMP_BONUS : Infinity, 0]; // empty stock: throw all
  const given = kind === 'beat' ? cards.slice(1) : cards; // "beat T C" gives up C only
  return [Math.max(...given.map((card) => worth(card, view.trump_suit))), -given.length];
}

function choose(legal, view) {
  moves += 1;
  // Fixed rules can go round in circles (the same cards taken and led again and again) until the
  // referee's action cap calls a draw: in a long game, an occasional random move breaks the loop.
  if (moves > LONG_GAME && random() < 0.2) return legal[Math.floor(random() * legal.length)];
  let best = legal[0];
  let bestCost = cost(best, view);
  for (const action of legal.slice(1)) {
    const c = cost(action, view);
    if (c[0] < bestCost[0] || (c[0] === bestCost[0] && c[1] < bestCost[1])) {
      best = action;
      bestCost = c;
    }
  }
  return best;
}

function send(message) {
  // Writes to a pipe are synchronous in node on Linux, so the line is out before the next read.
  process.stdout.write(JSON.stringify(message) + '\n');
}

const input = readline.createInterface({ input: process.stdin, terminal: false });
input.on('line', (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch (err) {
    console.error(`bot.js: ignoring a line that is not JSON: ${err.message}`);
    return;
  }
  switch (message.type) {
    case 'hello':
      send({ type: 'hello', protocol: 2, name: 'js-cheapest', version: '1.0' });
      break;
    case 'request':
      if (process.env.DURAK_SAMPLE_CRASH === '1') {
        throw new Error('sample crash: DURAK_SAMPLE_CRASH=1 crashes the bot at its first request');
      }
      send({ type: 'action', id: message.id, action: choose(message.legal, message.view) });
      break;
    case 'shutdown':
      process.exit(0);
      break;
    case 'game':
      moves = 0;
      random = seeded(message.seed);
      break;
    default: // game_over and any newer message type need no reply
      break;
  }
});
