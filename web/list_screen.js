// The list screen (/): the models of one view (selected, trending, downloads, tested) for a
// task on a stack, with their verdicts; search, task and stack controls, pages of PAGE_SIZE.
import { fetchModels, loadVersions, stackOptions } from './api.js';
import { h } from './dom.js';
import { CENSUS_MEANING, counted, formatBytes, formatCount, formatRatio, formatSeconds, formatShare, formatSpeedup, formatTokensPerSecond, predictedText, reasonText, stackLabel } from './format.js';
import { navigate } from './navigation.js';
import { architecturesUrl, causesUrl, compareUrl, listUrl, modelUrl, stackParams } from './urls.js';
import { VIEWS, hero, tabs, takeFocusRequest } from './views.js';
import { badge, driftBadge, selectControl, sortHeader } from './widgets.js';

// The Tested view's sortable columns: the API's sort key → the column's header.
const SORTS = {
  name: 'Model', verdict: 'Verdict', cores: 'Cores', runtime: 'Run time', memory: 'Peak memory', decode: 'Decode',
  speedup: 'Speedup',
};
// The columns sorted largest first.
const DESCENDING = new Set(['decode', 'speedup']);
const PAGE_SIZE = 50;

let searchTimer = 0;

function controls(versions, params, data) {
  const stack = data.stack || {};
  const backend = stack.backend || '';
  const stacks = stackOptions(versions, backend);
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

/** The census line of an untested model: a link to its type's row of the Architectures view. */
export function censusLine(census, id) {
  return h('a', {
    class: 'census-line', id, href: architecturesUrl(census.stack.stem, census.task, census.model_type),
    'data-nav': true, title: CENSUS_MEANING,
  }, census.text);
}

// What the memory ratio's measure means, for the summary's tooltip.
const MEASURE_MEANING = {
  rss: 'rss: the maximum resident size of run.py and its compile workers, which only grows — the compiled peak includes the eager run’s, so the ratio is at most about 1',
  cuda: 'cuda: the device allocator’s peak, reset between the eager and the compiled run',
  neuron: 'neuron: the device allocator’s peak, reset between the eager and the compiled run',
};

/** The stack's figures above its table (the rows of the task its verdicts come from), as
 * PyTorch's compiler dashboard gives a suite's, with each of the dashboard's alarms that fires
 * marked; null when nothing was tested. */
function perfSummary(summary) {
  if (!summary || !summary.tested) return null;
  const item = (id, text, title, marked = false) => h('span', { class: marked ? 'perf-item marked' : 'perf-item', id, title }, text);
  const items = [
    item('perf-pass-rate', `pass rate ${formatShare(summary.pass_rate)} (${summary.passed}/${summary.tested})`),
    summary.geomean_speedup === null
      ? item('perf-speedup', 'no eager baseline', 'No PASS of this view has an eager baseline to compare with (rows before schema 9, or run with --no-perf)')
      : item('perf-speedup', `speedup ${formatSpeedup(summary.geomean_speedup)} geomean (${summary.with_baseline} PASS)`,
        'Geometric mean of throughput ÷ eager throughput over the PASSes with an eager baseline'),
    summary.median_compile_s === null ? null
      : item('perf-compile', `compile ${formatSeconds(summary.median_compile_s)} median`, 'Median compile time over the PASSes'),
    summary.geomean_memory_ratio === null ? null
      : item('perf-memory', `memory ratio ${formatRatio(summary.geomean_memory_ratio)} geomean${summary.memory_measure ? ` (${summary.memory_measure})` : ''}`,
        `Geometric mean of eager peak ÷ compiled peak${summary.memory_measure ? `; ${MEASURE_MEANING[summary.memory_measure] || summary.memory_measure}` : ''}`),
    summary.with_long_generation
      ? item('perf-drift', `${summary.drifting} of ${summary.with_long_generation} drift in the long generation`, 'PASSes whose long generation fell below 90 % agreement with the CPU reference', summary.drifting > 0)
      : null,
  ].filter(Boolean);
  return h('div', { class: 'perf-summary', id: 'perf-summary' },
    h('p', { class: 'perf-line' },
      h('span', { class: 'perf-label', title: 'Every verdict of this task on this stack, not only the models of this view' }, 'Whole stack: '),
      items.flatMap((node, idx) => (idx ? [' · ', node] : [node]))),
    summary.alarms.length
      ? h('ul', { class: 'perf-alarms', 'aria-label': 'Alarms of the compiler dashboard that fire' },
        summary.alarms.map((alarm) => h('li', { class: 'alarm' }, alarm)))
      : null);
}

function verdictCell(model) {
  const cell = h('td', { class: 'verdict-cell' }, badge(model.status, model.status_class), driftBadge(model.drifts_after));
  if (model.predicted) cell.append(h('span', { class: 'predicted', title: model.predicted.why }, predictedText(model.predicted)));
  if (model.census) cell.append(censusLine(model.census, null));
  if (model.status === 'EXCLUDED') {
    const reason = model.exclusion_reason ? reasonText(model.exclusion_reason) : '';
    cell.append(h('span', { class: 'reason', title: model.exclusion_why || '' }, reason));
    if (model.exclusion_why) cell.append(h('span', { class: 'why' }, model.exclusion_why));
  } else if (model.error_signature && model.status !== 'PASS') {
    cell.append(h('span', { class: 'reason' }, model.error_signature));
  }
  // At phone width the measurement columns fold into one line under the verdict.
  if (model.cores !== null || model.runtime_s !== null) {
    const cores = model.cores === null ? null : counted(model.cores, 'core');
    cell.append(h('span', { class: 'phone-meta' },
      [cores, model.runtime_s === null ? null : formatSeconds(model.runtime_s),
        model.peak_device_memory_bytes === null ? null : formatBytes(model.peak_device_memory_bytes),
        model.speedup == null ? null : `${formatSpeedup(model.speedup)} over eager`]
        .filter(Boolean).join(' · ')));
  }
  return cell;
}

function testedHeader(key, data, params, attrs = {}) {
  return sortHeader(key, SORTS[key], {
    active: data.sort === key, descending: DESCENDING.has(key), attrs,
    onSort: () => navigate(listUrl({ ...params, view: 'tested', sort: key === 'name' ? '' : key, page: '' })),
  });
}

function modelsTable(data, params) {
  const tested = data.view === 'tested';
  const third = data.view === 'trending' ? 'Trending' : 'Downloads';
  const lastCell = (model) => (tested
    ? h('td', { class: 'num col-popularity', title: model.ttft_s == null ? '' : `first token ${formatSeconds(model.ttft_s)}` },
      formatTokensPerSecond(model.decode_tokens_per_s))
    : h('td', { class: 'num col-popularity' },
      data.view === 'trending' ? (model.trending_score ?? '—') : formatCount(model.downloads)));
  const head = tested
    ? [h('th', { scope: 'col', class: 'rank' }, '#'), testedHeader('name', data, params), testedHeader('verdict', data, params),
      testedHeader('cores', data, params, { class: 'num col-cores' }), testedHeader('runtime', data, params, { class: 'num col-runtime' }),
      testedHeader('memory', data, params, { class: 'num col-memory' }),
      testedHeader('decode', data, params, { class: 'num col-popularity', title: 'Decode tokens/s: 32 greedy tokens, batch 1, static cache' }),
      testedHeader('speedup', data, params, { class: 'num col-speedup', title: 'Speedup over eager: throughput ÷ the eager baseline’s, same process and inputs' })]
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
    lastCell(model),
    tested ? h('td', { class: 'num col-speedup' }, formatSpeedup(model.speedup)) : null));
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

// The stack listed after `stack` (older) on its backend, else the stack itself.
function previousStack(versions, stack) {
  const stacks = stackOptions(versions, stack.backend);
  const at = stacks.findIndex((item) => item.stem === stack.stem);
  return (stacks[at + 1] || stack).stem;
}

/** Draws the list for `state` into `root`, unless `isCurrent()` says a newer render took over. */
export async function renderList(root, state, isCurrent) {
  const params = state.params;
  const page = Math.max(1, parseInt(params.page || '1', 10) || 1);
  const [versions, data] = await Promise.all([
    loadVersions(), fetchModels(params, { offset: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE })]);
  if (!isCurrent()) return;
  const hadFocus = document.activeElement && document.activeElement.id;
  const selection = hadFocus === 'search' ? [document.activeElement.selectionStart, document.activeElement.selectionEnd] : null;

  const view = VIEWS.find((item) => item.id === data.view) || VIEWS[0];
  const counts = data.models.reduce((acc, model) => {
    acc[model.status] = acc[model.status] || { statusClass: model.status_class, count: 0 };
    acc[model.status].count += 1;
    return acc;
  }, {});
  const summary = data.stack
    ? h('p', { class: 'stack-line' }, h('span', { class: 'chip' }, data.stack.backend), ' ', stackLabel(data.stack))
    : h('p', { class: 'stack-line' }, 'No results in the dataset yet: every model is listed as not tested.');
  const body = data.models.length
    ? modelsTable(data, params)
    : h('div', { class: 'empty' }, data.search ? `No model matches “${data.search}” in this view.` : 'This view has no models for this task yet.');
  root.replaceChildren(
    hero(),
    h('section', { class: 'card' },
      tabs(data.view, params),
      h('div', { class: 'tab-panel', role: 'tabpanel', 'aria-labelledby': `tab-${data.view}` },
        h('p', { class: 'view-hint' }, view.hint),
        controls(versions, params, data),
        summary,
        data.stack ? perfSummary(data.summary) : null,
        h('p', { class: 'result-count' }, counted(data.total, 'model'),
          ...Object.entries(counts).map(([status, { statusClass, count }]) => h('span', { class: 'count-item' }, badge(status, statusClass), ` ${count}`)),
          data.stack ? h('a', { href: causesUrl({ ...params, ...stackParams(data.stack) }), 'data-nav': true, class: 'causes-link', id: 'causes-link' }, 'Failure causes →') : null,
          data.stack ? h('a', { href: compareUrl({ b: data.stack.stem, a: previousStack(versions, data.stack), task: data.task }), 'data-nav': true, class: 'causes-link', id: 'compare-link' }, 'Compare stacks →') : null),
        body,
        pager(data, params))));
  document.title = `canrun — ${view.label} · ${data.task || ''}`;
  const focusId = takeFocusRequest() || hadFocus;
  if (focusId) {
    const again = document.getElementById(focusId);
    if (again) {
      again.focus();
      if (selection) again.setSelectionRange(selection[0], selection[1]);
    }
  }
}
