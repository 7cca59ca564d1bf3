// The replay page alone (durak replay --html, durak play --html): one or more games, #game=N&step=M.
"use strict";

(() => {
  const games = JSON.parse(document.getElementById("games-data").textContent);
  const root = document.getElementById("viewer");
  const picker = document.getElementById("game-select");
  let viewer = null;

  // Several views of one game (the web's: every hand, then each of the viewer's own seats) are told apart by whose.
  function viewOf(game) {
    return game.seat === null ? " (every hand)" : " (as " + (game.shown || game.names)[game.seat] + " saw it)";
  }

  function fragment() {
    const params = new URLSearchParams(location.hash.slice(1));
    return { game: Number(params.get("game") || 1), step: Number(params.get("step") || 0) };
  }

  function show(index, step) {
    const game = games[Math.max(0, Math.min(games.length - 1, index - 1))];
    document.getElementById("page-title").textContent = game.title;
    picker.value = String(games.indexOf(game) + 1);
    viewer = new DurakViewer.Viewer(root, game, {
      step,
      onStep: (s) => {
        const where = (games.length > 1 ? "game=" + picker.value + "&" : "") + "step=" + s;
        history.replaceState(null, "", "#" + where);
      },
    });
  }

  games.forEach((game, i) => {
    const option = document.createElement("option");
    option.value = String(i + 1);
    option.textContent = (game.id === null ? (i + 1) + ": " : "") + game.title + viewOf(game);
    picker.append(option);
  });
  document.getElementById("game-picker").hidden = games.length < 2;
  picker.addEventListener("change", () => show(Number(picker.value), 0));
  window.addEventListener("hashchange", () => {
    const want = fragment();
    if (String(want.game) !== picker.value && games.length > 1) show(want.game, want.step);
    else if (viewer && viewer.step !== want.step) viewer.go(want.step);
  });
  // The page is the viewer: its keys work wherever the focus is (on the body after a click beside the table),
  // from the moment it loads, but in a menu or a field (the viewer's own listener takes those inside it).
  document.addEventListener("keydown", (e) => { if (viewer) viewer.key(e); });
  const start = fragment();
  show(start.game, start.step);
  root.focus({ preventScroll: true });
  document.body.dataset.ready = "1";
})();
