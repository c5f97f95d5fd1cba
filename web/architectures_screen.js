// The Architectures view (/?view=architectures): the census served beside the dataset, one row
// per model type of a census stack and task — its verdict on one core, sharded and by which
// parallelism, the cause of a failure, what transformers claims for the type, and how many
// ranked models name it. Each verdict links to its census row's page (run.py, log, stack).
import { getJson, loadVersions } from './api.js';
import { h } from './dom.js';
import { counted, reasonText, stackLabel } from './format.js';
import { navigate } from './navigation.js';
import { listUrl, modelUrl, stackParams, urlWith } from './urls.js';
import { VIEWS, hero, tabs, takeFocusRequest } from './views.js';
import { badge, selectControl, sortHeader } from './widgets.js';

// The sortable columns: the API's sort key → the column's header.
const SORTS = { type: 'Model type', one_core: 'One core', sharded: 'Sharded', ranked: 'Ranked models' };
const PARALLELISM = { tp: 'tensor parallel', ep: 'expert parallel' };

let searchTimer = 0;

function fetchArchitectures(params) {
  return getJson(urlWith('/api/architectures', ['stack', 'task', 'q', 'sort'], params));
}

function verdictLink(verdict, stack, task, id) {
  return h('a', { href: modelUrl(verdict.model_id, { task, ...stackParams(stack) }), 'data-nav': true, class: 'verdict-link', id },
    badge(verdict.status, verdict.status_class));
}

function shardedCell(entry, stack, task) {
  const sharded = entry.sharded;
  if (!sharded) {
    const failed = !['PASS', 'EXCLUDED'].includes(entry.one_core.status);
    return h('td', {}, h('span', { class: 'muted' }, failed ? 'not run: fails on one core' : '—'));
  }
  if (sharded.status === 'EXCLUDED') {
    return h('td', {}, verdictLink(sharded, stack, task, null), h('span', { class: 'reason' }, reasonText(sharded.exclusion_reason)));
  }
  return h('td', {}, verdictLink(sharded, stack, task, null),
    h('span', { class: 'reason' }, `${PARALLELISM[sharded.parallelism] || sharded.parallelism || ''}${sharded.cores ? ` · ${counted(sharded.cores, 'core')}` : ''}`),
    sharded.near_tie ? h('span', { class: 'why' }, 'tokens part at a near-tie of the reference') : null);
}

function claimsText(claims) {
  const parts = [];
  if (claims.fullgraph === true) parts.push('full graph');
  else if (claims.fullgraph === false) parts.push('no full graph');
  if (claims.tp_plan) parts.push('TP plan');
  if (claims.ep_plan) parts.push('EP plan');
  return parts.length ? parts.join(' · ') : 'no claim';
}

function typeHeader(key, data, params, attrs = {}) {
  return sortHeader(key, SORTS[key], {
    active: data.sort === key, descending: key === 'ranked', attrs,
    onSort: () => navigate(listUrl({ ...params, view: 'architectures', sort: key === 'type' ? '' : key })),
  });
}

function architecturesTable(data, params) {
  const rows = data.architectures.map((entry) => {
    const one = entry.one_core;
    return h('tr', { id: `type-${entry.model_type}` },
      h('td', { class: 'model-cell' }, h('a', { href: modelUrl(one.model_id, { task: data.task, ...stackParams(data.stack) }), 'data-nav': true, class: 'model-link' }, entry.model_type),
        h('span', { class: 'phone-meta' }, `${claimsText(entry.claims)} · ${counted(entry.ranked_models, 'ranked model')}`)),
      h('td', {}, verdictLink(one, data.stack, data.task, null),
        one.status === 'EXCLUDED' ? h('span', { class: 'reason' }, reasonText(one.exclusion_reason)) : null),
      shardedCell(entry, data.stack, data.task),
      h('td', { class: 'cause' }, entry.cause ? h('span', { class: 'why' }, reasonText(entry.cause)) : '—'),
      h('td', { class: 'col-claims claims' }, claimsText(entry.claims)),
      h('td', { class: 'num col-ranked' }, entry.ranked_models ? String(entry.ranked_models) : '—'));
  });
  return h('div', { class: 'table-wrap' },
    h('table', { class: 'models architectures', id: 'architectures-table' },
      h('caption', { class: 'visually-hidden' }, `Model types of the census for ${data.task}`),
      h('thead', {}, h('tr', {},
        typeHeader('type', data, params), typeHeader('one_core', data, params), typeHeader('sharded', data, params),
        h('th', { scope: 'col' }, 'Cause'),
        h('th', { scope: 'col', class: 'col-claims', title: 'What the stack’s transformers claims for the type: full-graph compile, a tensor-parallel plan, an expert-parallel plan' }, 'transformers claims'),
        typeHeader('ranked', data, params, { class: 'num col-ranked', title: 'Models of the type in this task’s rankings snapshot' }))),
      h('tbody', {}, rows)));
}

// The view's tally: a badge per verdict (sharded: with its parallelism or exclusion reason).
function counts(title, tally, id) {
  if (!tally.length) return null;
  return h('p', { class: 'counts-line', id },
    h('strong', {}, title),
    ...tally.map((item) => h('span', { class: 'count-item' }, badge(item.status, item.status_class),
      item.parallelism && item.parallelism !== 'none' ? ` ${item.parallelism}` : '',
      item.exclusion_reason ? ` ${reasonText(item.exclusion_reason)}` : '', ` ${item.count}`)));
}

/** Draws the Architectures view for `state` into `root`, unless a newer render took over. */
export async function renderArchitectures(root, state, isCurrent) {
  const versions = await loadVersions();
  // A task the census does not cover (the list's, kept by the tabs) falls back to its first.
  const censusTasks = new Set((versions.census || []).flatMap((item) => item.tasks));
  const params = { ...state.params, task: censusTasks.has(state.params.task) ? state.params.task : '' };
  const data = await fetchArchitectures(params);
  if (!isCurrent()) return;
  const hadFocus = document.activeElement && document.activeElement.id;
  const view = VIEWS.find((item) => item.id === 'architectures');
  const censusStacks = versions.census || [];

  const search = h('input', {
    id: 'search', type: 'search', placeholder: 'Search model types…  (press / )', value: params.q || '',
    autocomplete: 'off', spellcheck: 'false', 'aria-label': 'Search model types',
    oninput: (event) => {
      clearTimeout(searchTimer);
      const value = event.target.value;
      searchTimer = setTimeout(() => navigate(listUrl({ ...params, view: 'architectures', q: value }), { replace: true }), 120);
    },
  });
  const controls = h('div', { class: 'controls architectures-controls' },
    h('label', { class: 'control search-control', for: 'search' }, h('span', { class: 'control-label' }, 'Model type'), search),
    selectControl('task', 'Task', data.tasks.map((task) => ({ value: task, label: task })), data.task || '',
      (value) => navigate(listUrl({ ...params, view: 'architectures', task: value }))),
    selectControl('census-stack', 'Stack', censusStacks.map((item) => ({ value: item.stem, label: `${item.backend} · ${item.library} ${item.library_version} · ${item.compiler} ${item.compiler_version}` })),
      data.stack ? data.stack.stem : '',
      (value) => navigate(listUrl({ ...params, view: 'architectures', stack: value, task: '' }))));

  let body;
  if (!data.stack) {
    body = h('div', { class: 'empty', id: 'no-census' }, 'No census is served beside this dataset. `make census` builds one, and `canrun serve --census DATASET` serves it.');
  } else if (!data.architectures.length) {
    body = h('div', { class: 'empty' }, data.search ? `No model type matches “${data.search}”.` : 'The census has no model type for this task.');
  } else {
    body = architecturesTable(data, params);
  }
  root.replaceChildren(
    hero(),
    h('section', { class: 'card' },
      tabs('architectures', params),
      h('div', { class: 'tab-panel', role: 'tabpanel', 'aria-labelledby': 'tab-architectures' },
        h('p', { class: 'view-hint' }, view.hint, '. A census verdict is evidence about the architecture, not about any one model: random weights, the stack’s own configs shrunk.'),
        controls,
        data.stack ? h('p', { class: 'stack-line' }, h('span', { class: 'chip' }, data.stack.backend), ' ', stackLabel(data.stack)) : null,
        h('p', { class: 'result-count' }, counted(data.total, 'model type')),
        counts('One core:', data.counts.one_core, 'counts-one-core'),
        counts('Sharded:', data.counts.sharded, 'counts-sharded'),
        body)));
  document.title = `canrun — Architectures · ${data.task || ''}`;
  const focusId = takeFocusRequest() || hadFocus;
  if (focusId) document.getElementById(focusId)?.focus();
}
