// The canrun Space: one page of five screens (the model list, the census's architectures, a
// model page, the failure causes, the comparison of two stacks), all state in the URL. This
// module boots the page: it draws the screen the URL names, again on each navigation, and
// handles page-wide keys and links. Every piece of data is put in the page with textContent or attributes, never as
// HTML (dom.js).
import { renderArchitectures } from './architectures_screen.js';
import { renderCauses } from './causes_screen.js';
import { renderCompare } from './compare_screen.js';
import { h } from './dom.js';
import { renderList } from './list_screen.js';
import { renderModel } from './model_screen.js';
import { navigate, onNavigate } from './navigation.js';
import { screenOf } from './urls.js';

const app = document.getElementById('app');
const SCREENS = { list: renderList, architectures: renderArchitectures, model: renderModel, causes: renderCauses, compare: renderCompare };

let renderToken = 0;  // drops answers to requests a newer render has replaced

function errorBox(error, backUrl) {
  return h('div', { class: 'error-box', role: 'alert' },
    h('strong', {}, 'Something is not right: '), error.message,
    backUrl ? h('p', {}, h('a', { href: backUrl, 'data-nav': true }, 'Back to the default view')) : null);
}

async function render() {
  const token = ++renderToken;
  const isCurrent = () => token === renderToken;
  const state = screenOf(location.href);
  try {
    await SCREENS[state.screen](app, state, isCurrent);
  } catch (error) {
    if (!isCurrent()) return;
    app.replaceChildren(errorBox(error, state.screen === 'model' || Object.keys(state.params).length ? '/' : null));
  }
  // What is drawn belongs to this URL (tests and scripts wait for it).
  if (isCurrent()) app.dataset.renderedUrl = location.href;
}

// Links inside the page navigate without a reload (Ctrl/Cmd-click still opens a tab).
document.addEventListener('click', (event) => {
  const link = event.target.closest('a[data-nav]');
  if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey ||
      event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(link.getAttribute('href'));
});
window.addEventListener('popstate', () => render());
document.addEventListener('keydown', (event) => {
  if (event.key === '/' && !['INPUT', 'SELECT', 'TEXTAREA'].includes(document.activeElement.tagName)) {
    const search = document.getElementById('search');
    if (search) { event.preventDefault(); search.focus(); }
  }
});

onNavigate(render);
render();
