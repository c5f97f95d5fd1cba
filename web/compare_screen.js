// The compare screen (/compare): what changed from stack A to stack B, by the same rule as
// `canrun dataset diff` — regressions, fixes, plans, run time, memory, speedup over eager and
// compile time.
import { fetchCompare, loadVersions } from './api.js';
import { h } from './dom.js';
import { counted, formatBytes, formatSeconds, formatSpeedup, stackLabel } from './format.js';
import { navigate } from './navigation.js';
import { compareUrl, listUrl, modelUrl, stackParams } from './urls.js';
import { selectControl } from './widgets.js';

// The API's lists of changes, in the order shown, with their titles.
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
  ['speedup_changes', 'Speedup over eager changed by 20 % or more'],
  ['compile_time_changes', 'Compile time changed by 20 % or more'],
];

function compareCell(key, change) {
  if (key === 'changed_plans') return `${change.from_cores} core(s) ${change.from_parallelism} → ${change.to_cores} core(s) ${change.to_parallelism}`;
  if (key === 'run_time_changes') return `${formatSeconds(change.from_runtime_s)} → ${formatSeconds(change.to_runtime_s)}`;
  if (key === 'memory_changes') return `${formatBytes(change.from_memory_bytes)} → ${formatBytes(change.to_memory_bytes)}`;
  if (key === 'speedup_changes') return `${formatSpeedup(change.from_speedup)} → ${formatSpeedup(change.to_speedup)}`;
  if (key === 'compile_time_changes') return `${formatSeconds(change.from_compile_s)} → ${formatSeconds(change.to_compile_s)}`;
  return `${change.from || 'not tested'} → ${change.to || 'not tested'}`;
}

/** Draws the comparison for `state` into `root`, unless `isCurrent()` says a newer render took over. */
export async function renderCompare(root, state, isCurrent) {
  const params = state.params;
  const versions = await loadVersions();
  // By default B is the first stack /api/versions lists and A the next.
  const all = versions.stacks || [];
  const a = params.a || (all[1] || all[0] || {}).stem;
  const b = params.b || (all[0] || {}).stem;
  const data = await fetchCompare(a, b, params.task);
  if (!isCurrent()) return;
  const options = all.map((item) => ({ value: item.stem, label: `${item.backend} · ${stackLabel(item)}` }));
  // A list the server does not send (an older canrun) is left out.
  const sections = COMPARE_LISTS.filter(([key]) => Array.isArray(data[key])).map(([key, title]) => {
    const changes = data[key];
    return h('section', { class: 'card compare-list', id: `compare-${key}` },
      h('h2', {}, `${title} `, h('span', { class: 'muted' }, `(${changes.length})`)),
      changes.length
        ? h('ul', {}, changes.map((change) => h('li', {},
          h('a', { href: modelUrl(change.model_id, { task: change.task, ...stackParams(data.b) }), 'data-nav': true }, change.model_id),
          ` · ${change.task} · `, compareCell(key, change))))
        : h('p', { class: 'muted' }, 'None.'));
  });
  root.replaceChildren(
    h('p', {}, h('a', { href: listUrl(stackParams(data.b)), 'data-nav': true }, '← Back to the models')),
    h('section', { class: 'hero' }, h('h1', {}, 'Compare two stacks'),
      h('p', { class: 'lede' }, `${counted(data.regressions.length, 'regression')}, ${counted(data.fixes.length, 'fix', 'fixes')}, ${data.unchanged} unchanged, by the same rule as canrun dataset diff.`)),
    h('section', { class: 'card' }, h('div', { class: 'controls compare-controls' },
      selectControl('compare-a', 'A (before)', options, data.a.stem, (value) => navigate(compareUrl({ ...params, a: value, b: data.b.stem }))),
      selectControl('compare-b', 'B (after)', options, data.b.stem, (value) => navigate(compareUrl({ ...params, a: data.a.stem, b: value }))))),
    ...sections);
  document.title = 'canrun — compare stacks';
}
