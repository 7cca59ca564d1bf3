// Per-bot statistics (leaderboard --stats data): drawn when the report carries them.
"use strict";
window.DurakStats = (data, section) => {
  if (!data.stats) section.append(Object.assign(document.createElement("p"), { textContent: "No statistics in this report." }));
};
