// Page parts that more than one screen draws.
import { h } from './dom.js';
import { DRIFT_MEANING, driftText } from './format.js';

// The API gives each status its display class (pass, fail, warn, excluded, untested): the page
// draws it and never classifies results itself.
export function badge(status, statusClass) {
  return h('span', { class: `badge ${statusClass}` }, status === 'not tested' ? 'Not tested' : status);
}

/** The badge of a verdict whose long generation drifted from the CPU reference (its
 * drifts_after); null when it did not drift or none was run. */
export function driftBadge(driftsAfter, attrs = {}) {
  if (driftsAfter === null || driftsAfter === undefined) return null;
  return h('span', { class: 'badge warn drift', title: DRIFT_MEANING, ...attrs }, driftText(driftsAfter));
}

/** A labelled <select> (#`id`) of `options` ({value, label}); disabled when there are none. */
export function selectControl(id, label, options, value, onChange) {
  return h('label', { class: 'control', for: id },
    h('span', { class: 'control-label' }, label),
    h('select', { id, onchange: (event) => onChange(event.target.value), disabled: options.length === 0 },
      options.map((option) => h('option', { value: option.value, selected: option.value === value }, option.label))));
}

/** A sortable column's header (#sort-`key`): `active` when the list is sorted by it, shown with
 * its direction (`descending` for the columns sorted largest first); `onSort` sorts by it. */
export function sortHeader(key, label, { active, descending, onSort, attrs = {} }) {
  return h('th', { scope: 'col', ...attrs, 'aria-sort': active ? (descending ? 'descending' : 'ascending') : 'none' },
    h('button', { type: 'button', class: active ? 'sort active' : 'sort', id: `sort-${key}`, onclick: onSort },
      label, active ? (descending ? ' ↓' : ' ↑') : ''));
}
