// The list's views as tabs (Selected, Trending, Downloads, Tested, Architectures): the list
// screen draws the first four, the architectures screen the census's.
import { h } from './dom.js';
import { navigate } from './navigation.js';
import { listUrl } from './urls.js';

export const VIEWS = [
  { id: 'selected', label: 'Selected', hint: 'Curated models, in the curator’s order' },
  { id: 'trending', label: 'Trending', hint: 'The Hub’s trending models for this task' },
  { id: 'downloads', label: 'Downloads', hint: 'The Hub’s most downloaded models for this task' },
  { id: 'tested', label: 'Tested', hint: 'Every model tested on this stack, whatever list it is on' },
  { id: 'architectures', label: 'Architectures', hint: 'The census: every model type of the stack’s transformers, tested as a tiny random-weight checkpoint on one core, then sharded' },
];

let focusAfterRender = null;  // id of the element to focus once the next render is drawn

/** The id of the element a tab key asked to focus, once (the screen calls it after drawing). */
export function takeFocusRequest() {
  const id = focusAfterRender;
  focusAfterRender = null;
  return id;
}

// A view's URL keeps the task and the search; the architectures view picks its own stack.
function viewUrl(params, view) {
  return listUrl({ ...params, view: view === 'selected' ? '' : view, page: '', sort: '', stack: '' });
}

/** The tabs of the views, `activeView` selected; arrow keys move between them. */
export function tabs(activeView, params) {
  const list = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Views' });
  VIEWS.forEach((view, idx) => {
    const selected = view.id === activeView;
    list.append(h('button', {
      class: selected ? 'tab active' : 'tab', role: 'tab', id: `tab-${view.id}`, type: 'button',
      'aria-selected': selected ? 'true' : 'false', tabindex: selected ? '0' : '-1', title: view.hint,
      onclick: () => navigate(viewUrl(params, view.id)),
      onkeydown: (event) => {
        const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
        if (!step) return;
        event.preventDefault();
        const next = VIEWS[(idx + step + VIEWS.length) % VIEWS.length];
        focusAfterRender = `tab-${next.id}`;
        navigate(viewUrl(params, next.id));
      },
    }, view.label));
  });
  return list;
}

/** The heading every view shares. */
export function hero() {
  return h('section', { class: 'hero' },
    h('h1', {}, 'Does it run?'),
    h('p', { class: 'lede' }, 'The Hub’s popular models, tested unmodified with torch.compile on each software stack. Pick a model to see how to reproduce the result.'));
}
