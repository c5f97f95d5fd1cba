// The failure causes screen (/causes): a stack's failures grouped by their normalised error
// signature, most frequent first, each with its models.
import { fetchCauses } from './api.js';
import { h } from './dom.js';
import { counted, stackLabel } from './format.js';
import { listUrl, modelUrl, stackParams } from './urls.js';
import { badge } from './widgets.js';

/** Draws the causes for `state` into `root`, unless `isCurrent()` says a newer render took over. */
export async function renderCauses(root, state, isCurrent) {
  const params = state.params;
  const data = await fetchCauses(params);
  if (!isCurrent()) return;
  const stack = data.stack;
  const listParams = stack ? { ...params, ...stackParams(stack) } : params;
  const causes = data.causes.map((cause, idx) => h('article', { class: 'card cause', id: `cause-${idx + 1}` },
    h('h2', { class: 'cause-title' }, h('span', { class: 'cause-count' }, `${cause.count} ×`), ' ', h('code', {}, cause.signature)),
    h('p', { class: 'cause-results' }, ...cause.results.map(({ result, count, status_class: statusClass }) =>
      h('span', { class: 'count-item' }, badge(result, statusClass), ` ${count}`))),
    h('p', { class: 'cause-models' }, ...cause.models.flatMap((id, at) => {
      // A model of another task than the page's is listed as 'org/name (task)'.
      const [model, task] = id.endsWith(')') ? [id.slice(0, id.indexOf(' (')), id.slice(id.indexOf(' (') + 2, -1)] : [id, params.task];
      const link = h('a', { href: modelUrl(model, { ...listParams, task }), 'data-nav': true }, id);
      return at ? [', ', link] : [link];
    })),
    cause.model_types?.length
      ? h('p', { class: 'cause-types' }, 'Model types: ', ...cause.model_types.flatMap((type, at) => (at ? [', ', h('code', {}, type)] : [h('code', {}, type)])))
      : null,
    cause.excerpt ? h('div', { class: 'error-text' }, h('pre', { tabindex: '0' }, cause.excerpt)) : null));
  root.replaceChildren(
    h('p', {}, h('a', { href: listUrl(listParams), 'data-nav': true }, '← Back to the models')),
    h('section', { class: 'hero' },
      h('h1', {}, 'Failure causes'),
      h('p', { class: 'lede' }, stack
        ? `${stack.backend} · ${stackLabel(stack)}: ${counted(data.failures, 'failure')} in ${counted(data.causes.length, 'cause')}, grouped by their normalised error signature.`
        : 'No results in the dataset yet.')),
    ...(causes.length ? causes : [h('section', { class: 'card' }, h('p', { class: 'muted' }, 'No failures on this stack.'))]));
  document.title = 'canrun — failure causes';
}
