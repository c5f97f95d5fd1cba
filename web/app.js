// The canrun Space: one page, two screens (the model list and a model page), all state in the
// URL. Every piece of data is put in the page with textContent or attributes, never as HTML.

const app = document.getElementById('app');
const toast = document.getElementById('toast');

const VIEWS = [
  { id: 'selected', label: 'Selected', hint: 'Curated models, in the curator’s order' },
  { id: 'trending', label: 'Trending', hint: 'The Hub’s trending models for this task' },
  { id: 'downloads', label: 'Downloads', hint: 'The Hub’s most downloaded models for this task' },
  { id: 'tested', label: 'Tested', hint: 'Every model tested on this stack, whatever list it is on' },
];
// The Tested view's sortable columns: the API's sort key → the column's header.
const SORTS = { name: 'Model', verdict: 'Verdict', cores: 'Cores', runtime: 'Run time', memory: 'Peak memory', decode: 'Decode' };
const PAGE_SIZE = 50;
// Tasks whose output is generated text (32 greedy tokens); the others have their own figures.
const GENERATION_TASKS = new Set(['text-generation', 'image-text-to-text']);
const STACK_PARAMS = ['backend', 'compiler_version', 'library_version'];

let versions = null;  // /api/versions, fetched once per page load
let renderToken = 0;  // drops answers to requests a newer render has replaced
let searchTimer = 0;
let focusAfterRender = null;  // id of the element to focus once the next render is drawn

// --- small DOM helpers --------------------------------------------------------------------

/** h('a', {href: '/x', class: 'y'}, 'text', child): children are text or nodes, never HTML. */
function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else if (name === 'class') node.className = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function showToast(text) {
  toast.textContent = text;
  toast.classList.add('visible');
  clearTimeout(showToast.timer);
  showToast.timer = setTimeout(() => toast.classList.remove('visible'), 1800);
}

// --- formatting ---------------------------------------------------------------------------

function formatSeconds(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

function formatBytes(bytes) {
  if (bytes === null || bytes === undefined) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

function formatCount(count) {
  if (count === null || count === undefined) return '—';
  if (count >= 1e6) return `${(count / 1e6).toFixed(1)}M`;
  if (count >= 1e3) return `${(count / 1e3).toFixed(1)}k`;
  return String(count);
}

const REASON_TEXT = {
  low_priority: 'low priority', incompatible: 'incompatible', gated: 'gated',
  remote_code: 'needs remote code', too_large: 'too large', no_parallel_plan: 'no parallel plan',
  no_safetensors: 'no safetensors', unsupported_task: 'unsupported task', note: 'curator’s note',
};

// The API gives each status its display class (pass, fail, warn, excluded, untested): the page
// draws it and never classifies results itself.
function badge(status, statusClass) {
  return h('span', { class: `badge ${statusClass}` }, status === 'not tested' ? 'Not tested' : status);
}

// --- URL state ----------------------------------------------------------------------------

function currentState() {
  const url = new URL(location.href);
  const params = Object.fromEntries(url.searchParams.entries());
  const match = url.pathname.match(/^\/model\/([^/]+)\/([^/]+)\/?$/);
  if (match) {
    return { screen: 'model', id: `${decodeURIComponent(match[1])}/${decodeURIComponent(match[2])}`, params };
  }
  if (url.pathname === '/causes') return { screen: 'causes', params };
  if (url.pathname === '/compare') return { screen: 'compare', params };
  return { screen: 'list', params };
}

// `path` with the named params that have a value, in that order, as its query.
function urlWith(path, names, params) {
  const query = new URLSearchParams();
  for (const name of names) if (params[name]) query.set(name, params[name]);
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

function listUrl(params) {
  // The sort belongs to the Tested view only.
  return urlWith('/', ['view', 'task', 'q', ...(params.view === 'tested' ? ['sort'] : []), ...STACK_PARAMS, 'page'], params);
}

const compareUrl = (params) => urlWith('/compare', ['a', 'b', 'task'], params);
const causesUrl = (params) => urlWith('/causes', ['task', ...STACK_PARAMS], params);

function modelUrl(id, params) {
  const [org, name] = id.split('/');
  return urlWith(`/model/${encodeURIComponent(org)}/${encodeURIComponent(name)}`, ['task', ...STACK_PARAMS], params);
}

function navigate(url, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  render();
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

// --- data ---------------------------------------------------------------------------------

async function getJson(path) {
  const response = await fetch(path, { headers: { Accept: 'application/json' } });
  let body = null;
  try { body = await response.json(); } catch { body = null; }
  if (!response.ok) {
    const error = new Error(body && body.error ? body.error : `${response.status} ${response.statusText}`);
    error.parameters = body && body.parameters ? body.parameters : [];
    throw error;
  }
  return body;
}

// A failure's full log (its stdout then stderr, the end kept), fetched when first opened.
function runLog(url) {
  const text = h('pre', { id: 'run-log-text', tabindex: '0' }, 'Loading…');
  let loaded = false;
  return h('details', {
    class: 'run-log', id: 'run-log',
    ontoggle: async (event) => {
      if (!event.target.open || loaded) return;
      loaded = true;
      try {
        const response = await fetch(url);
        text.textContent = response.ok ? await response.text() : `The log could not be read: ${response.status}`;
      } catch (error) {
        text.textContent = `The log could not be read: ${error.message}`;
      }
    },
  }, h('summary', {}, 'Full log of the run ', h('a', { href: url, class: 'raw-link' }, '(as text)')), text);
}

async function loadVersions() {
  if (!versions) versions = await getJson('/api/versions');
  return versions;
}

function errorBox(error, backUrl) {
  return h('div', { class: 'error-box', role: 'alert' },
    h('strong', {}, 'Something is not right: '), error.message,
    backUrl ? h('p', {}, h('a', { href: backUrl, 'data-nav': true }, 'Back to the default view')) : null);
}

// --- the list screen ----------------------------------------------------------------------

function stackOptions(backend) {
  const entry = (versions.backends || []).find((item) => item.name === backend);
  return entry ? entry.stacks : [];
}

function selectControl(id, label, options, value, onChange) {
  return h('label', { class: 'control', for: id },
    h('span', { class: 'control-label' }, label),
    h('select', { id, onchange: (event) => onChange(event.target.value), disabled: options.length === 0 },
      options.map((option) => h('option', { value: option.value, selected: option.value === value }, option.label))));
}

function tabs(activeView, params) {
  const list = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Views' });
  VIEWS.forEach((view, idx) => {
    const selected = view.id === activeView;
    list.append(h('button', {
      class: selected ? 'tab active' : 'tab', role: 'tab', id: `tab-${view.id}`, type: 'button',
      'aria-selected': selected ? 'true' : 'false', tabindex: selected ? '0' : '-1', title: view.hint,
      onclick: () => navigate(listUrl({ ...params, view: view.id === 'selected' ? '' : view.id, page: '' })),
      onkeydown: (event) => {
        const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
        if (!step) return;
        event.preventDefault();
        const next = VIEWS[(idx + step + VIEWS.length) % VIEWS.length];
        focusAfterRender = `tab-${next.id}`;
        navigate(listUrl({ ...params, view: next.id === 'selected' ? '' : next.id, page: '' }));
      },
    }, view.label));
  });
  return list;
}

function controls(params, data) {
  const stack = data.stack || {};
  const backend = stack.backend || '';
  const stacks = stackOptions(backend);
  const compilerVersions = [...new Set(stacks.map((item) => item.compiler_version))];
  const libraryVersions = stacks.filter((item) => item.compiler_version === stack.compiler_version)
    .map((item) => item.library_version);
  const libraryName = stack.library || 'transformers';
  const compilerName = stack.compiler || 'compiler';

  const search = h('input', {
    id: 'search', type: 'search', placeholder: 'Search models…  (press / )', value: params.q || '',
    autocomplete: 'off', spellcheck: 'false', 'aria-label': 'Search models by name',
    oninput: (event) => {
      clearTimeout(searchTimer);
      const value = event.target.value;
      searchTimer = setTimeout(() => navigate(listUrl({ ...params, q: value, page: '' }), { replace: true }), 120);
    },
  });
  const tasks = (versions.tasks || []).map((task) => ({ value: task, label: task }));
  return h('div', { class: 'controls' },
    h('label', { class: 'control search-control', for: 'search' }, h('span', { class: 'control-label' }, 'Model'), search),
    selectControl('task', 'Task', tasks, data.task || '', (value) => navigate(listUrl({ ...params, task: value, page: '' }))),
    selectControl('backend', 'Backend', (versions.backends || []).map((item) => ({ value: item.name, label: item.name })), backend,
      (value) => navigate(listUrl({ ...params, backend: value, compiler_version: '', library_version: '', page: '' }))),
    selectControl('compiler_version', compilerName, compilerVersions.map((value) => ({ value, label: value })), stack.compiler_version || '',
      (value) => navigate(listUrl({ ...params, backend, compiler_version: value, library_version: '', page: '' }))),
    selectControl('library_version', libraryName, libraryVersions.map((value) => ({ value, label: value })), stack.library_version || '',
      (value) => navigate(listUrl({ ...params, backend, compiler_version: stack.compiler_version, library_version: value, page: '' }))));
}

// A plan predicted for a model not tested on the stack (from the Hub's parameter counts and the
// stack's parallel plans): shown apart from verdicts, always labelled "predicted".
function predictedText(predicted) {
  if (predicted.exclusion) return `predicted: ${REASON_TEXT[predicted.exclusion] || predicted.exclusion}`;
  const open = predicted.parallelism === null && predicted.cores > 1;
  const how = open ? ' · TP or EP' : (predicted.parallelism && predicted.parallelism !== 'none' ? ` · ${predicted.parallelism}` : '');
  return `predicted: ${predicted.cores} core${predicted.cores === 1 ? '' : 's'}${how}`;
}

function verdictCell(model) {
  const cell = h('td', { class: 'verdict-cell' }, badge(model.status, model.status_class));
  if (model.predicted) cell.append(h('span', { class: 'predicted', title: model.predicted.why }, predictedText(model.predicted)));
  if (model.status === 'EXCLUDED') {
    const reason = model.exclusion_reason ? (REASON_TEXT[model.exclusion_reason] || model.exclusion_reason) : '';
    cell.append(h('span', { class: 'reason', title: model.exclusion_why || '' }, reason));
    if (model.exclusion_why) cell.append(h('span', { class: 'why' }, model.exclusion_why));
  } else if (model.error_signature && model.status !== 'PASS') {
    cell.append(h('span', { class: 'reason' }, model.error_signature));
  }
  // At phone width the measurement columns fold into one line under the verdict.
  if (model.cores !== null || model.runtime_s !== null) {
    const cores = model.cores === null ? null : `${model.cores} core${model.cores === 1 ? '' : 's'}`;
    cell.append(h('span', { class: 'phone-meta' },
      [cores, model.runtime_s === null ? null : formatSeconds(model.runtime_s),
        model.peak_device_memory_bytes === null ? null : formatBytes(model.peak_device_memory_bytes)]
        .filter(Boolean).join(' · ')));
  }
  return cell;
}

function sortHeader(key, data, params, attrs = {}) {
  const active = data.sort === key;
  return h('th', { scope: 'col', ...attrs, 'aria-sort': active ? (key === 'decode' ? 'descending' : 'ascending') : 'none' },
    h('button', { type: 'button', class: active ? 'sort active' : 'sort', id: `sort-${key}`,
      onclick: () => navigate(listUrl({ ...params, view: 'tested', sort: key === 'name' ? '' : key, page: '' })) },
    SORTS[key], active ? (key === 'decode' ? ' ↓' : ' ↑') : ''));
}

function modelsTable(data, params) {
  const tested = data.view === 'tested';
  const third = data.view === 'trending' ? 'Trending' : 'Downloads';
  const lastCell = (model) => (tested
    ? h('td', { class: 'num col-popularity', title: model.ttft_s == null ? '' : `first token ${formatSeconds(model.ttft_s)}` },
      model.decode_tokens_per_s == null ? '—' : `${model.decode_tokens_per_s.toFixed(1)} tok/s`)
    : h('td', { class: 'num col-popularity' },
      data.view === 'trending' ? (model.trending_score ?? '—') : formatCount(model.downloads)));
  const head = tested
    ? [h('th', { scope: 'col', class: 'rank' }, '#'), sortHeader('name', data, params), sortHeader('verdict', data, params),
      sortHeader('cores', data, params, { class: 'num col-cores' }), sortHeader('runtime', data, params, { class: 'num col-runtime' }),
      sortHeader('memory', data, params, { class: 'num col-memory' }),
      sortHeader('decode', data, params, { class: 'num col-popularity', title: 'Decode tokens/s: 32 greedy tokens, batch 1, static cache' })]
    : [h('th', { scope: 'col', class: 'rank' }, '#'), h('th', { scope: 'col' }, 'Model'),
      h('th', { scope: 'col' }, 'Verdict'), h('th', { scope: 'col', class: 'num col-cores' }, 'Cores'),
      h('th', { scope: 'col', class: 'num col-runtime', title: 'Load, compile and generate' }, 'Run time'),
      h('th', { scope: 'col', class: 'num col-memory' }, 'Peak memory'),
      h('th', { scope: 'col', class: 'num col-popularity' }, third)];
  const rows = data.models.map((model) => h('tr', {},
    h('td', { class: 'rank' }, model.rank),
    h('td', { class: 'model-cell' },
      h('a', { href: modelUrl(model.id, { ...params, task: data.task }), 'data-nav': true, class: 'model-link' }, model.id),
      model.note ? h('span', { class: 'note' }, model.note) : null),
    verdictCell(model),
    h('td', { class: 'num col-cores' }, model.cores ?? (model.predicted?.cores
      ? h('span', { class: 'predicted', title: `predicted: ${model.predicted.why}` }, `~${model.predicted.cores}`) : '—')),
    h('td', { class: 'num col-runtime' }, formatSeconds(model.runtime_s)),
    h('td', { class: 'num col-memory' }, formatBytes(model.peak_device_memory_bytes)),
    lastCell(model)));
  return h('div', { class: 'table-wrap' },
    h('table', { class: 'models' },
      h('caption', { class: 'visually-hidden' }, `${data.view} models for ${data.task}`),
      h('thead', {}, h('tr', {}, head)),
      h('tbody', {}, rows)));
}

function pager(data, params) {
  if (data.total <= data.limit) return null;
  const page = Math.floor(data.offset / data.limit) + 1;
  const pages = Math.ceil(data.total / data.limit);
  const go = (number) => navigate(listUrl({ ...params, page: number > 1 ? String(number) : '' }));
  return h('nav', { class: 'pager', 'aria-label': 'Pages' },
    h('button', { type: 'button', class: 'button', disabled: page <= 1, onclick: () => go(page - 1) }, '← Previous'),
    h('span', {}, `Page ${page} of ${pages}`),
    h('button', { type: 'button', class: 'button', disabled: page >= pages, onclick: () => go(page + 1) }, 'Next →'));
}

async function renderList(state, token) {
  const params = state.params;
  const page = Math.max(1, parseInt(params.page || '1', 10) || 1);
  const query = new URLSearchParams();
  for (const name of ['view', 'task', 'q', ...(params.view === 'tested' ? ['sort'] : []), ...STACK_PARAMS]) {
    if (params[name]) query.set(name, params[name]);
  }
  query.set('offset', String((page - 1) * PAGE_SIZE));
  query.set('limit', String(PAGE_SIZE));
  await loadVersions();
  const data = await getJson(`/api/models?${query}`);
  if (token !== renderToken) return;
  const hadFocus = document.activeElement && document.activeElement.id;
  const selection = hadFocus === 'search' ? [document.activeElement.selectionStart, document.activeElement.selectionEnd] : null;

  const view = VIEWS.find((item) => item.id === data.view) || VIEWS[0];
  const counts = data.models.reduce((acc, model) => {
    acc[model.status] = acc[model.status] || { statusClass: model.status_class, count: 0 };
    acc[model.status].count += 1;
    return acc;
  }, {});
  const summary = data.stack
    ? h('p', { class: 'stack-line' }, h('span', { class: 'chip' }, data.stack.backend), ' ',
      `${data.stack.compiler} ${data.stack.compiler_version} · ${data.stack.library} ${data.stack.library_version}`)
    : h('p', { class: 'stack-line' }, 'No results in the dataset yet: every model is listed as not tested.');
  const body = data.models.length
    ? modelsTable(data, params)
    : h('div', { class: 'empty' }, data.search ? `No model matches “${data.search}” in this view.` : 'This view has no models for this task yet.');
  app.replaceChildren(
    h('section', { class: 'hero' },
      h('h1', {}, 'Does it run?'),
      h('p', { class: 'lede' }, 'The Hub’s popular models, tested unmodified with torch.compile on each software stack. Pick a model to see how to reproduce the result.')),
    h('section', { class: 'card' },
      tabs(data.view, params),
      h('div', { class: 'tab-panel', role: 'tabpanel', 'aria-labelledby': `tab-${data.view}` },
        h('p', { class: 'view-hint' }, view.hint),
        controls(params, data),
        summary,
        h('p', { class: 'result-count' }, `${data.total} model${data.total === 1 ? '' : 's'}`,
          ...Object.entries(counts).map(([status, { statusClass, count }]) => h('span', { class: 'count-item' }, badge(status, statusClass), ` ${count}`)),
          data.stack ? h('a', { href: causesUrl({ ...params, ...stackParams(data.stack) }), 'data-nav': true, class: 'causes-link', id: 'causes-link' }, 'Failure causes →') : null,
          data.stack ? h('a', { href: compareUrl({ b: data.stack.stem, a: previousStack(data.stack), task: data.task }), 'data-nav': true, class: 'causes-link', id: 'compare-link' }, 'Compare stacks →') : null),
        body,
        pager(data, params))));
  document.title = `canrun — ${view.label} · ${data.task || ''}`;
  const focusId = focusAfterRender || hadFocus;
  focusAfterRender = null;
  if (focusId) {
    const again = document.getElementById(focusId);
    if (again) {
      again.focus();
      if (selection) again.setSelectionRange(selection[0], selection[1]);
    }
  }
}

// --- the model screen ---------------------------------------------------------------------

function copyButton(text, label) {
  return h('button', {
    type: 'button', class: 'button copy', 'aria-label': `Copy ${label}`,
    onclick: async (event) => {
      const button = event.currentTarget;
      try {
        await navigator.clipboard.writeText(text);
      } catch {
        const area = h('textarea', { class: 'visually-hidden' });
        area.value = text;
        document.body.append(area);
        area.select();
        document.execCommand('copy');
        area.remove();
      }
      button.textContent = 'Copied';
      showToast(`${label} copied`);
      setTimeout(() => { button.textContent = 'Copy'; }, 1500);
    },
  }, 'Copy');
}

function codeBlock(text, label, { id, language } = {}) {
  return h('div', { class: 'code-block' },
    h('div', { class: 'code-head' }, h('span', {}, label), copyButton(text, label)),
    h('pre', { id, tabindex: '0', 'aria-label': label }, h('code', { class: language ? `language-${language}` : null }, text)));
}

function fact(label, value, { wide = false } = {}) {
  return h('div', { class: wide ? 'fact wide' : 'fact' }, h('dt', {}, label), h('dd', {}, value));
}

// How the output was checked, and which evidence decided (`verification`, named in the
// dataset card): `reference` — one core, tokens equal to the CPU reference's; `judge+agreement`
// — sharded, the judge AND the teacher-forced agreement with the CPU reference; `judge` —
// sharded, the judge alone (no reference). Tokens that matched the reference and the agreement
// are shown beside, for information where they did not decide.
function verifiedBy(verdict) {
  if (!verdict?.verification) return '—';
  const tokens = verdict.match_tokens === null || verdict.match_tokens === undefined ? null
    : `${verdict.match_tokens}/${verdict.new_tokens} tokens match the CPU reference`;
  const agreement = typeof verdict.agreement === 'number'
    ? `teacher-forced agreement with the CPU reference ${(100 * verdict.agreement).toFixed(1)}%` : null;
  const parts = (...items) => items.filter(Boolean).join('; ');
  if (verdict.verification === 'reference') return parts(tokens || verdict.verification, agreement);
  if (verdict.verification !== 'judge' && verdict.verification !== 'judge+agreement') {
    return parts(verdict.verification, tokens, agreement);
  }
  const judge = (verdict.judge_model || 'judge').split('@')[0].split('/').pop();
  const score = verdict.judge_score;
  const threshold = verdict.judge_threshold;
  let text = `judge ${judge}`;
  if (typeof score === 'number' && typeof threshold === 'number') {
    const fluent = score >= threshold;
    text = `judge ${judge}: ${score.toFixed(2)} ${fluent ? '≥' : '<'} ${threshold.toFixed(2)} (${fluent ? 'fluent' : 'not fluent'})`;
  }
  if (verdict.verification === 'judge+agreement') {
    return parts(`decided by the judge and the agreement: ${text}`, agreement, tokens);
  }
  return parts(text, tokens);
}

function historyTable(data) {
  const rows = data.history.map((item) => h('tr', { class: item.current ? 'current' : null },
    h('td', {}, h('a', {
      href: modelUrl(data.id, { task: data.task, backend: item.backend, compiler_version: item.compiler_version, library_version: item.library_version }),
      'data-nav': true,
    }, item.compiler_version), item.current ? h('span', { class: 'chip small' }, 'shown') : null),
    h('td', {}, item.library_version),
    h('td', {}, badge(item.status, item.status_class),
      item.regression ? h('span', { class: 'mark regression', title: 'PASS on the previous version, not on this one' }, '▼ regression') : null,
      item.fixed ? h('span', { class: 'mark fixed', title: 'Failed on the previous version, passes on this one' }, '▲ fixed') : null),
    h('td', { class: 'num col-cores' }, item.cores ?? '—'),
    h('td', { class: 'num col-runtime' }, formatSeconds(item.runtime_s)),
    h('td', { class: 'num col-memory' }, formatBytes(item.peak_device_memory_bytes))));
  return h('div', { class: 'table-wrap' }, h('table', { class: 'models history' },
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, data.stack ? data.stack.compiler : 'compiler'), h('th', { scope: 'col' }, data.stack ? data.stack.library : 'library'),
      h('th', { scope: 'col' }, 'Verdict'), h('th', { scope: 'col', class: 'num col-cores' }, 'Cores'),
      h('th', { scope: 'col', class: 'num col-runtime' }, 'Run time'), h('th', { scope: 'col', class: 'num col-memory' }, 'Peak memory'))),
    h('tbody', {}, rows)));
}

function backendsTable(data) {
  const rows = data.backends.map((item) => h('tr', {},
    h('td', {}, h('a', { href: modelUrl(data.id, { task: data.task, ...stackParams(item) }), 'data-nav': true }, item.backend)),
    h('td', {}, `${item.compiler} ${item.compiler_version} · ${item.library} ${item.library_version}`),
    h('td', {}, badge(item.status, item.status_class)),
    h('td', { class: 'num col-cores' }, item.cores == null ? '—' : `${item.cores} (${item.parallelism})`),
    h('td', { class: 'num col-runtime' }, formatSeconds(item.runtime_s)),
    h('td', { class: 'num col-memory' }, formatBytes(item.peak_device_memory_bytes)),
    h('td', { class: 'num col-popularity' }, item.decode_tokens_per_s == null ? '—' : `${item.decode_tokens_per_s.toFixed(1)} tok/s`)));
  return h('div', { class: 'table-wrap' }, h('table', { class: 'models backends', id: 'backends-table' },
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'Backend'), h('th', { scope: 'col' }, 'Latest stack'), h('th', { scope: 'col' }, 'Verdict'),
      h('th', { scope: 'col', class: 'num col-cores' }, 'Cores'), h('th', { scope: 'col', class: 'num col-runtime' }, 'Run time'),
      h('th', { scope: 'col', class: 'num col-memory' }, 'Peak memory'), h('th', { scope: 'col', class: 'num col-popularity' }, 'Decode'))),
    h('tbody', {}, rows)));
}

async function renderModel(state, token) {
  const query = new URLSearchParams();
  for (const name of ['task', ...STACK_PARAMS]) if (state.params[name]) query.set(name, state.params[name]);
  const [org, name] = state.id.split('/');
  await loadVersions();
  const data = await getJson(`/api/model/${encodeURIComponent(org)}/${encodeURIComponent(name)}${query.toString() ? `?${query}` : ''}`);
  if (token !== renderToken) return;
  const verdict = data.verdict;
  const back = listUrl({ task: data.task, ...Object.fromEntries(STACK_PARAMS.map((key) => [key, state.params[key]])) });

  const facts = h('dl', { class: 'facts' },
    fact('Verdict', badge(data.status, data.status_class)),
    fact('Cores', verdict?.cores ?? '—'),
    fact('Parallelism', verdict?.parallelism ?? '—'),
    fact('Run time', formatSeconds(verdict?.runtime_s)),
    fact('Compile', formatSeconds(verdict?.compile_s)),
    fact('Peak memory', formatBytes(verdict?.peak_device_memory_bytes)),
    fact('Weights', formatBytes(verdict?.weights_bytes)),
    verdict?.throughput_unit && verdict.throughput_unit !== 'tokens/s'
      ? fact('Throughput', verdict.throughput != null ? `${verdict.throughput.toFixed(1)} ${verdict.throughput_unit}` : '—')
      : fact('Decode', verdict?.decode_tokens_per_s ? `${verdict.decode_tokens_per_s.toFixed(1)} tok/s` : '—'),
    fact('Verified', h('span', { id: 'verified' }, verifiedBy(verdict)), { wide: true }),
    fact('What it means', h('span', { id: 'meaning' }, 'PASS is about correctness: the output matches the CPU reference (one core) or reads as fluent English to the judge (sharded). '
      + (GENERATION_TASKS.has(data.task)
        ? 'Run time, first token and decode tokens/s measure 32 greedy tokens at batch 1 with a static cache, after compiling: a smoke test of speed, not a benchmark.'
        : 'Run time and throughput measure the recipe’s fixed inputs after compiling: a smoke test of speed, not a benchmark.')), { wide: true }));

  const notices = [];
  if (data.note) notices.push(h('p', { class: 'notice' }, h('strong', {}, 'Note: '), data.note));
  if (data.status === 'EXCLUDED') {
    const reason = verdict?.exclusion_reason || data.exclusion?.reason;
    notices.push(h('p', { class: 'notice excluded' }, h('strong', {}, `Excluded: ${REASON_TEXT[reason] || reason || ''}. `), data.exclusion?.why || ''));
  }
  if (!verdict && data.status === 'not tested') {
    notices.push(h('p', { class: 'notice' }, 'Not tested on this stack yet.',
      data.predicted ? [' ', h('span', { class: 'predicted-plan', id: 'predicted-plan' },
        `${predictedText(data.predicted)[0].toUpperCase()}${predictedText(data.predicted).slice(1)} — ${data.predicted.why} `,
        'A prediction from the Hub’s parameter counts, not a verdict.')] : null));
  }
  if (verdict?.error) {
    notices.push(h('div', { class: 'error-text' }, h('h3', {}, 'Error'), h('pre', { id: 'error-text', tabindex: '0' }, verdict.error)));
  }
  if (data.log_url) notices.push(runLog(data.log_url));

  // The output: the backend's image beside the CPU reference's, or the text (a summary for
  // embeddings and encoder tasks).
  let output = null;
  if (data.images) {
    const figure = (role, caption) => data.images[role]
      ? h('figure', { class: 'output-image' }, h('img', { src: data.images[role], alt: `${caption}: the image generated from the recipe’s prompt`, id: `image-${role.replace('_', '-')}`, width: 256, height: 256 }), h('figcaption', {}, caption))
      : null;
    output = h('section', { class: 'card' }, h('h2', {}, 'Output'),
      h('div', { class: 'image-pair' }, figure('image', `On ${data.stack ? data.stack.backend : 'the backend'}`), figure('reference_image', 'CPU reference')),
      verdict?.output_text ? h('p', { class: 'muted', id: 'output-text' }, verdict.output_text) : null);
  } else if (verdict?.output_text) {
    output = h('section', { class: 'card' }, h('h2', {}, 'Output'), h('pre', { class: 'output-text', id: 'output-text', tabindex: '0' }, verdict.output_text));
  }

  const reproduce = [];
  if (verdict) {
    const packages = verdict.packages || [];
    if (verdict.stack && typeof verdict.stack === 'object') {
      reproduce.push(h('li', {}, h('h3', {}, 'Start from the stack: the environment it ran in'),
        h('p', { id: 'stack-summary' }, Object.entries(verdict.stack).map(([pkg, version]) => `${pkg} ${version}`).join(' · '))));
    }
    reproduce.push(h('li', {}, h('h3', {}, 'Install the packages on top of the stack'),
      packages.length ? codeBlock(`pip install ${packages.join(' ')}`, 'Install command', { id: 'packages' })
        : h('p', { class: 'muted', id: 'no-packages' }, 'Nothing beyond the stack.')));
    reproduce.push(h('li', {}, h('h3', {}, `Prefetch compiled graphs for ${verdict.compiler} ${verdict.compiler_version}`),
      data.prefetch_command ? codeBlock(data.prefetch_command, 'Cache prefetch command', { id: 'prefetch' })
        : h('p', { class: 'muted', id: 'prefetch' }, data.prefetch_note || 'No public cache for this backend.')));
    if (verdict.run_py) {
      reproduce.push(h('li', {}, h('h3', {}, 'Save the script as run.py'), codeBlock(verdict.run_py, 'run.py', { id: 'run-py', language: 'python' })));
    }
    reproduce.push(h('li', {}, h('h3', {}, 'Run it (it launches its own ranks; no torchrun)'), codeBlock(data.run_command, 'Run command', { id: 'run-command' })));
  }

  let stackTable = null;
  if (verdict && verdict.stack && typeof verdict.stack === 'object') {
    stackTable = h('table', { class: 'kv' }, h('tbody', {},
      Object.entries(verdict.stack).map(([pkg, version]) => h('tr', {}, h('th', { scope: 'row' }, pkg), h('td', {}, version)))));
  }

  const stackSelect = data.stack ? selectControl('model-stack', 'Stack',
    stackOptions(data.stack.backend).map((item) => ({ value: `${item.compiler_version}\n${item.library_version}`, label: `${item.compiler} ${item.compiler_version} · ${item.library} ${item.library_version}` })),
    `${data.stack.compiler_version}\n${data.stack.library_version}`,
    (value) => {
      const [compilerVersion, libraryVersion] = value.split('\n');
      navigate(modelUrl(data.id, { task: data.task, backend: data.stack.backend, compiler_version: compilerVersion, library_version: libraryVersion }));
    }) : null;

  app.replaceChildren(
    h('nav', { class: 'crumbs' }, h('a', { href: back, 'data-nav': true }, '← All models')),
    h('section', { class: 'card model-head' },
      h('div', { class: 'title-row' },
        h('h1', { class: 'model-title' }, data.id),
        h('a', { class: 'hub-link', href: `https://huggingface.co/${data.id}`, rel: 'noopener noreferrer', target: '_blank' }, 'View on the Hub ↗')),
      h('p', { class: 'stack-line' }, h('span', { class: 'chip' }, data.task),
        data.stack ? [' ', h('span', { class: 'chip' }, data.stack.backend), ` ${data.stack.compiler} ${data.stack.compiler_version} · ${data.stack.library} ${data.stack.library_version}`,
          verdict && verdict.library !== data.stack.library ? h('span', { id: 'task-library' }, ` · ${verdict.library} ${verdict.library_version}`) : null] : null),
      stackSelect ? h('div', { class: 'controls compact' }, stackSelect,
        data.tasks.length > 1 ? selectControl('model-task', 'Task', data.tasks.map((task) => ({ value: task, label: task })), data.task,
          (value) => navigate(modelUrl(data.id, { ...state.params, task: value }))) : null) : null,
      facts, notices),
    output,
    reproduce.length ? h('section', { class: 'card' }, h('h2', {}, 'Reproduce'), h('ol', { class: 'steps' }, reproduce)) : null,
    stackTable ? h('section', { class: 'card' }, h('h2', {}, 'Stack'), stackTable) : null,
    data.backends && data.backends.length ? h('section', { class: 'card' }, h('h2', {}, 'Across backends (latest verdict on each)'), backendsTable(data)) : null,
    h('section', { class: 'card' }, h('h2', {}, 'History across versions'),
      data.history.length ? historyTable(data) : h('p', { class: 'muted' }, 'No results on any stack yet.')));
  document.title = `canrun — ${data.id}`;
}

// --- failure causes -----------------------------------------------------------------------

function stackParams(stack) {
  return { backend: stack.backend, compiler_version: stack.compiler_version, library_version: stack.library_version };
}

async function renderCauses(state, token) {
  const params = state.params;
  const data = await getJson(urlWith('/api/causes', STACK_PARAMS, params));
  if (token !== renderToken) return;
  const stack = data.stack;
  const listParams = stack ? { ...params, ...stackParams(stack) } : params;
  const causes = data.causes.map((cause, idx) => h('article', { class: 'card cause', id: `cause-${idx + 1}` },
    h('h2', { class: 'cause-title' }, h('span', { class: 'cause-count' }, `${cause.count} ×`), ' ', h('code', {}, cause.signature)),
    h('p', { class: 'cause-results' }, ...cause.results.map(({ result, count, status_class: statusClass }) =>
      h('span', { class: 'count-item' }, badge(result, statusClass), ` ${count}`))),
    h('p', { class: 'cause-models' }, ...cause.models.flatMap((id, at) => {
      const [model, task] = id.endsWith(')') ? [id.slice(0, id.indexOf(' (')), id.slice(id.indexOf(' (') + 2, -1)] : [id, params.task];
      const link = h('a', { href: modelUrl(model, { ...listParams, task }), 'data-nav': true }, id);
      return at ? [', ', link] : [link];
    })),
    cause.excerpt ? h('div', { class: 'error-text' }, h('pre', { tabindex: '0' }, cause.excerpt)) : null));
  app.replaceChildren(
    h('p', {}, h('a', { href: listUrl(listParams), 'data-nav': true }, '← Back to the models')),
    h('section', { class: 'hero' },
      h('h1', {}, 'Failure causes'),
      h('p', { class: 'lede' }, stack
        ? `${stack.backend} · ${stack.compiler} ${stack.compiler_version} · ${stack.library} ${stack.library_version}: ${data.failures} failure${data.failures === 1 ? '' : 's'} in ${data.causes.length} cause${data.causes.length === 1 ? '' : 's'}, grouped by their normalised error signature.`
        : 'No results in the dataset yet.')),
    ...(causes.length ? causes : [h('section', { class: 'card' }, h('p', { class: 'muted' }, 'No failures on this stack.'))]));
  document.title = 'canrun — failure causes';
}

// --- compare two stacks -------------------------------------------------------------------

// The stack listed after `stack` (older) on its backend, else the stack itself.
function previousStack(stack) {
  const stacks = stackOptions(stack.backend);
  const at = stacks.findIndex((item) => item.stem === stack.stem);
  return (stacks[at + 1] || stack).stem;
}

const COMPARE_LISTS = [
  ['regressions', 'Regressions (PASS → a failure of the backend)'],
  ['fixes', 'Fixes'],
  ['unverified', 'Unverified (PASS → no verdict on the backend), not regressions'],
  ['newly_tested', 'New to B'],
  ['no_longer_tested', 'No longer tested in B'],
  ['other_changes', 'Other verdict changes'],
  ['changed_plans', 'Changed plans'],
  ['run_time_changes', 'Run time changed by 20 % or more'],
  ['memory_changes', 'Peak memory changed by 20 % or more'],
];

function compareCell(key, change) {
  if (key === 'changed_plans') return `${change.from_cores} core(s) ${change.from_parallelism} → ${change.to_cores} core(s) ${change.to_parallelism}`;
  if (key === 'run_time_changes') return `${formatSeconds(change.from_runtime_s)} → ${formatSeconds(change.to_runtime_s)}`;
  if (key === 'memory_changes') return `${formatBytes(change.from_memory_bytes)} → ${formatBytes(change.to_memory_bytes)}`;
  return `${change.from || 'not tested'} → ${change.to || 'not tested'}`;
}

async function renderCompare(state, token) {
  const params = state.params;
  await loadVersions();
  const all = versions.stacks || [];
  const a = params.a || (all[1] || all[0] || {}).stem;
  const b = params.b || (all[0] || {}).stem;
  const query = new URLSearchParams({ a: a || '', b: b || '' });
  if (params.task) query.set('task', params.task);
  const data = await getJson(`/api/compare?${query}`);
  if (token !== renderToken) return;
  const options = all.map((item) => ({ value: item.stem, label: `${item.backend} · ${item.compiler} ${item.compiler_version} · ${item.library} ${item.library_version}` }));
  const sections = COMPARE_LISTS.map(([key, title]) => {
    const changes = data[key];
    return h('section', { class: 'card compare-list', id: `compare-${key}` },
      h('h2', {}, `${title} `, h('span', { class: 'muted' }, `(${changes.length})`)),
      changes.length
        ? h('ul', {}, changes.map((change) => h('li', {},
          h('a', { href: modelUrl(change.model_id, { task: change.task, ...stackParams(data.b) }), 'data-nav': true }, change.model_id),
          ` · ${change.task} · `, compareCell(key, change))))
        : h('p', { class: 'muted' }, 'None.'));
  });
  app.replaceChildren(
    h('p', {}, h('a', { href: listUrl(stackParams(data.b)), 'data-nav': true }, '← Back to the models')),
    h('section', { class: 'hero' }, h('h1', {}, 'Compare two stacks'),
      h('p', { class: 'lede' }, `${data.regressions.length} regression${data.regressions.length === 1 ? '' : 's'}, ${data.fixes.length} fix${data.fixes.length === 1 ? '' : 'es'}, ${data.unchanged} unchanged, by the same rule as canrun dataset diff.`)),
    h('section', { class: 'card' }, h('div', { class: 'controls compare-controls' },
      selectControl('compare-a', 'A (before)', options, data.a.stem, (value) => navigate(compareUrl({ ...params, a: value, b: data.b.stem }))),
      selectControl('compare-b', 'B (after)', options, data.b.stem, (value) => navigate(compareUrl({ ...params, a: data.a.stem, b: value }))))),
    ...sections);
  document.title = 'canrun — compare stacks';
}

// --- main ---------------------------------------------------------------------------------

async function render() {
  const token = ++renderToken;
  const state = currentState();
  try {
    if (state.screen === 'model') await renderModel(state, token);
    else if (state.screen === 'causes') await renderCauses(state, token);
    else if (state.screen === 'compare') await renderCompare(state, token);
    else await renderList(state, token);
  } catch (error) {
    if (token !== renderToken) return;
    app.replaceChildren(errorBox(error, state.screen === 'model' || Object.keys(state.params).length ? '/' : null));
  }
  // What is drawn belongs to this URL (tests and scripts wait for it).
  if (token === renderToken) app.dataset.renderedUrl = location.href;
}

render();
