// Page parts that more than one screen draws.
import { h } from './dom.js';

// The API gives each status its display class (pass, fail, warn, excluded, untested): the page
// draws it and never classifies results itself.
export function badge(status, statusClass) {
  return h('span', { class: `badge ${statusClass}` }, status === 'not tested' ? 'Not tested' : status);
}

/** A labelled <select> (#`id`) of `options` ({value, label}); disabled when there are none. */
export function selectControl(id, label, options, value, onChange) {
  return h('label', { class: 'control', for: id },
    h('span', { class: 'control-label' }, label),
    h('select', { id, onchange: (event) => onChange(event.target.value), disabled: options.length === 0 },
      options.map((option) => h('option', { value: option.value, selected: option.value === value }, option.label))));
}
