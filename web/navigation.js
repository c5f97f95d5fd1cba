// Moving between screens without a reload: the URL changes, then the page draws it. app.js
// hands over its draw function at boot, so screens can navigate without importing app.js.

let drawPage = () => {};

/** Sets what draws the page for the current URL (app.js's render). */
export function onNavigate(draw) {
  drawPage = draw;
}

/** Goes to `url` (a new history entry, or in place of the current one) and draws it. */
export function navigate(url, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  drawPage();
}
