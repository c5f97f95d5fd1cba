// The model page (/model/org/name): one model's verdict on a task and stack, its output, how to
// reproduce it, its latest verdict on every backend and its history across versions.
import { fetchModel, loadVersions, stackOptions, taskDetails } from './api.js';
import { h, showToast } from './dom.js';
import { CENSUS_MEANING, DRIFT_MEANING, driftText, formatBytes, formatLatency, formatRatio, formatSeconds, formatShare, formatSpeedup, formatTokensPerSecond, predictedText, reasonText, stackLabel } from './format.js';
import { navigate } from './navigation.js';
import { architecturesUrl, listUrl, modelUrl, stackParams } from './urls.js';
import { badge, driftBadge, selectControl } from './widgets.js';

// A verdict's output_text that starts with "source: " (what a translator or a reranker read, up
// to its "this run: " line): [the source, the rest]; else [null, the text].
function splitSource(text) {
  const at = text?.startsWith('source: ') ? text.indexOf('\nthis run: ') : -1;
  return at < 0 ? [null, text] : [text.slice('source: '.length, at), text.slice(at + 1)];
}

const PASS_MEANING = 'PASS is about correctness: the output matches the CPU reference (one core) or reads as fluent English to the judge (sharded). ';

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
// sharded, the judge alone (no reference); `agreement` — sharded, random weights, the agreement
// alone. Tokens that matched the reference and the agreement
// are shown beside, for information where they did not decide.
function verifiedBy(verdict) {
  if (!verdict?.verification) return '—';
  const tokens = verdict.match_tokens === null || verdict.match_tokens === undefined ? null
    : `${verdict.match_tokens}/${verdict.new_tokens} tokens match the CPU reference`;
  const agreement = typeof verdict.agreement === 'number'
    ? `teacher-forced agreement with the CPU reference ${(100 * verdict.agreement).toFixed(1)}%` : null;
  const parts = (...items) => items.filter(Boolean).join('; ');
  if (verdict.verification === 'reference') return parts(tokens || verdict.verification, agreement);
  // Random weights (the census) write no English: the agreement alone decided.
  if (verdict.verification === 'agreement') return parts(`decided by the agreement: ${agreement || '—'}`, tokens);
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

// The speed figure of the task: decode tokens/s for generated text, else the recipe's
// throughput in its own unit (sentences/s, steps/s).
function speedFact(task, verdict) {
  // A task the registry does not know (a row of an older canrun): what the row says it measured.
  const generatesText = task ? task.generates_text : !verdict?.throughput_unit || verdict.throughput_unit === 'tokens/s';
  if (generatesText) {
    // A row without a decode measurement may hold 0 there: shown as missing.
    return fact('Decode', formatTokensPerSecond(verdict?.decode_tokens_per_s || null));
  }
  return fact('Throughput', verdict?.throughput != null ? `${verdict.throughput.toFixed(1)} ${verdict.throughput_unit}` : '—');
}

// How the peaks behind the memory ratio were read (memory_measure, the backend profile's
// peak_memory).
const DEVICE_PEAK = 'Peak memory is the device allocator’s peak, reset between the eager and the compiled run.';
const MEMORY_MEANING = {
  rss: 'Peak memory is the maximum resident size of run.py and its compile workers; it only grows, so the compiled peak includes the eager run’s and the compiler’s.',
  cuda: DEVICE_PEAK,
  neuron: DEVICE_PEAK,
};

// The columns of how well a verdict ran (schema 9); rows recorded before have none of them.
const HOW_WELL_COLUMNS = ['speedup', 'eager_throughput', 'eager_ttft_s', 'eager_peak_memory_bytes', 'eager_note',
  'memory_ratio', 'long_tokens', 'long_decode_tokens_per_s', 'long_agreement', 'drifts_after'];

/** The "How well" card: speedup over the eager baseline measured in the same run.py, the two
 * runs' throughput, first token and peak memory side by side, compile time, and the long
 * generation (a drift said loudly: the PASS is for the 32-token check). Null for a verdict that
 * has none of these. */
function howWellCard(verdict) {
  if (!verdict || !HOW_WELL_COLUMNS.some((column) => verdict[column] !== null && verdict[column] !== undefined)) return null;
  const unit = verdict.throughput_unit || 'tokens/s';
  // A generation row's throughput is its decode speed; one without a decode measurement may hold 0.
  const compiledRate = verdict.throughput ?? (unit === 'tokens/s' ? verdict.decode_tokens_per_s || null : null);
  const rate = (value) => (value === null || value === undefined ? '—' : `${value.toFixed(1)} ${unit}`);
  const sideBySide = [
    ['Throughput', rate(verdict.eager_throughput), rate(compiledRate)],
    ['First token', formatLatency(verdict.eager_ttft_s), formatLatency(verdict.ttft_s)],
    ['Peak memory', formatBytes(verdict.eager_peak_memory_bytes), formatBytes(verdict.peak_device_memory_bytes)],
  ].filter(([, eager, compiled]) => eager !== '—' || compiled !== '—');
  // Not .facts: that names the verdict's own figures, once on the page.
  const figures = h('dl', { class: 'figures' },
    fact('Speedup', h('span', { id: 'how-well-speedup', title: 'Throughput ÷ the eager baseline’s' },
      verdict.speedup === null || verdict.speedup === undefined ? 'no eager baseline' : `${formatSpeedup(verdict.speedup)} over eager`)),
    fact('Compile', h('span', { id: 'how-well-compile' }, formatSeconds(verdict.compile_s))),
    fact('Memory ratio', h('span', { id: 'how-well-memory-ratio', title: 'Eager peak ÷ compiled peak' }, formatRatio(verdict.memory_ratio))));
  const table = sideBySide.length ? h('div', { class: 'table-wrap how-well-wrap' }, h('table', { class: 'models how-well', id: 'how-well-table' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, ''), h('th', { scope: 'col', class: 'num' }, 'Eager'), h('th', { scope: 'col', class: 'num' }, 'Compiled'))),
    h('tbody', {}, sideBySide.map(([label, eager, compiled]) => h('tr', {},
      h('th', { scope: 'row' }, label), h('td', { class: 'num' }, eager), h('td', { class: 'num' }, compiled)))))) : null;
  const measure = verdict.memory_measure;
  const memory = measure
    ? h('p', { class: 'muted', id: 'memory-meaning' }, MEMORY_MEANING[measure] || `Peak memory read as ${measure}.`)
    : null;
  const eagerNote = verdict.eager_note
    ? h('p', { class: 'notice', id: 'eager-note' }, h('strong', {}, 'Eager baseline: '), verdict.eager_note)
    : null;
  let long = null;
  if (verdict.long_tokens != null || verdict.long_agreement != null || verdict.drifts_after != null) {
    const parts = [
      verdict.long_tokens == null ? null : `${verdict.long_tokens} tokens`,
      verdict.long_decode_tokens_per_s == null ? null : formatTokensPerSecond(verdict.long_decode_tokens_per_s),
      verdict.long_agreement == null ? null : `teacher-forced agreement with the CPU reference ${formatShare(verdict.long_agreement)}`,
    ].filter(Boolean);
    long = [h('h3', {}, 'Long generation'),
      h('p', { id: 'long-generation' }, `${parts.join(' · ')}, on the same compiled graphs.`),
      verdict.drifts_after == null ? null : h('p', { class: 'notice drift', id: 'drift-line', role: 'note' },
        h('strong', {}, `⚠ ${driftText(verdict.drifts_after)[0].toUpperCase()}${driftText(verdict.drifts_after).slice(1)}. `), DRIFT_MEANING)];
  }
  return h('section', { class: 'card how-well-card', id: 'how-well' },
    h('h2', {}, 'How well'),
    h('p', { class: 'muted' }, 'The eager baseline is the same model in the same run.py, on the same device and inputs, without torch.compile.'),
    figures, table, memory, eagerNote, long);
}

function historyTable(data) {
  const rows = data.history.map((item) => h('tr', { class: item.current ? 'current' : null },
    h('td', {}, h('a', {
      href: modelUrl(data.id, { task: data.task, ...stackParams(item) }),
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
    h('td', {}, stackLabel(item)),
    h('td', {}, badge(item.status, item.status_class)),
    h('td', { class: 'num col-cores' }, item.cores == null ? '—' : `${item.cores} (${item.parallelism})`),
    h('td', { class: 'num col-runtime' }, formatSeconds(item.runtime_s)),
    h('td', { class: 'num col-memory' }, formatBytes(item.peak_device_memory_bytes)),
    h('td', { class: 'num col-popularity' }, formatTokensPerSecond(item.decode_tokens_per_s))));
  return h('div', { class: 'table-wrap' }, h('table', { class: 'models backends', id: 'backends-table' },
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'Backend'), h('th', { scope: 'col' }, 'Latest stack'), h('th', { scope: 'col' }, 'Verdict'),
      h('th', { scope: 'col', class: 'num col-cores' }, 'Cores'), h('th', { scope: 'col', class: 'num col-runtime' }, 'Run time'),
      h('th', { scope: 'col', class: 'num col-memory' }, 'Peak memory'), h('th', { scope: 'col', class: 'num col-popularity' }, 'Decode'))),
    h('tbody', {}, rows)));
}

// How the run was boxed (the `isolation` column): the parts of canrun's box, or none.
const ISOLATION_PARTS = {
  user: 'user namespace', net: 'no network but loopback', mount: 'read-only but its folders',
  pid: 'PID namespace', pids: 'process limit',
};

function isolationText(isolation) {
  if (!isolation) return '—';
  if (isolation === 'none') return 'not boxed (the machine allowed none); no secrets passed to it';
  return `boxed: ${isolation.split(',').map((part) => ISOLATION_PARTS[part] || part).join(', ')}; no secrets passed to it`;
}

/** Draws the model page for `state` into `root`, unless `isCurrent()` says a newer render took over. */
export async function renderModel(root, state, isCurrent) {
  const [versions, data] = await Promise.all([loadVersions(), fetchModel(state.id, state.params)]);
  if (!isCurrent()) return;
  const verdict = data.verdict;
  const task = taskDetails(versions, data.task);
  // A census row (canrun-census/<type>) belongs to the Architectures view and its stacks.
  const census = data.census_row;
  const back = census && data.stack && verdict
    ? architecturesUrl(data.stack.stem, data.task, verdict.model_type)
    : listUrl({ task: data.task, ...stackParams(state.params) });

  const facts = h('dl', { class: 'facts' },
    fact('Verdict', [badge(data.status, data.status_class), driftBadge(verdict?.drifts_after, { id: 'verdict-drift' })]),
    fact('Cores', verdict?.cores ?? '—'),
    fact('Parallelism', verdict?.parallelism ?? '—'),
    fact('Run time', formatSeconds(verdict?.runtime_s)),
    fact('Compile', formatSeconds(verdict?.compile_s)),
    fact('Peak memory', formatBytes(verdict?.peak_device_memory_bytes)),
    fact('Weights', formatBytes(verdict?.weights_bytes)),
    speedFact(task, verdict),
    fact('Verified', h('span', { id: 'verified' }, verifiedBy(verdict)), { wide: true }),
    fact('Isolation', h('span', { id: 'isolation' }, isolationText(verdict?.isolation)), { wide: true }),
    fact('What it means', h('span', { id: 'meaning' }, PASS_MEANING + (task?.speed_meaning || '')), { wide: true }));

  const notices = [];
  if (data.note) notices.push(h('p', { class: 'notice' }, h('strong', {}, 'Note: '), data.note));
  if (data.status === 'EXCLUDED') {
    const reason = verdict?.exclusion_reason || data.exclusion?.reason;
    notices.push(h('p', { class: 'notice excluded' }, h('strong', {}, `Excluded: ${reasonText(reason) || ''}. `), data.exclusion?.why || ''));
  }
  if (census && verdict) {
    notices.push(h('p', { class: 'notice census', id: 'census-row' }, h('strong', {}, 'A census row: '),
      `a tiny random-weight checkpoint of the model type ${verdict.model_type || ''}, built from the stack’s own transformers by canrun census. `,
      'Its verdict is evidence about the architecture on this stack, not about any Hub model.'));
  }
  if (!verdict && data.status === 'not tested') {
    const predicted = data.predicted ? predictedText(data.predicted) : '';
    notices.push(h('p', { class: 'notice' }, 'Not tested on this stack yet.',
      data.predicted ? [' ', h('span', { class: 'predicted-plan', id: 'predicted-plan' },
        `${predicted[0].toUpperCase()}${predicted.slice(1)} — ${data.predicted.why} `,
        'A prediction from the Hub’s parameter counts, not a verdict.')] : null));
  }
  if (data.census) {
    notices.push(h('p', { class: 'notice census', id: 'census-evidence' }, h('strong', {}, 'Its architecture: '),
      h('a', { href: architecturesUrl(data.census.stack.stem, data.census.task, data.census.model_type), 'data-nav': true, id: 'census-link' }, data.census.text),
      '. ', CENSUS_MEANING));
  }
  if (verdict?.error) {
    notices.push(h('div', { class: 'error-text' }, h('h3', {}, 'Error'), h('pre', { id: 'error-text', tabindex: '0' }, verdict.error)));
  }
  if (data.log_url) notices.push(runLog(data.log_url));

  // The output: the backend's image beside the CPU reference's, or the text (a summary for
  // embeddings and encoder tasks). A row's text that starts with what the model read ("source: "
  // up to "this run: ") gives that to the Input card.
  let output = null;
  const [source, outputText] = splitSource(verdict?.output_text);
  const figure = (role, caption, alt) => data.images?.[role]
    ? h('figure', { class: 'output-image' }, h('img', { src: data.images[role], alt, id: `image-${role.replaceAll('_', '-')}`, width: 256, height: 256 }), h('figcaption', {}, caption))
    : null;
  if (data.images?.image || data.images?.reference_image) {
    const alt = (caption) => `${caption}: the image generated from the recipe’s prompt`;
    const on = `On ${data.stack ? data.stack.backend : 'the backend'}`;
    output = h('section', { class: 'card' }, h('h2', {}, 'Output'),
      h('div', { class: 'image-pair' }, figure('image', on, alt(on)), figure('reference_image', 'CPU reference', alt('CPU reference'))),
      verdict?.output_text ? h('p', { class: 'muted', id: 'output-text' }, verdict.output_text) : null);
  } else if (outputText) {
    output = h('section', { class: 'card' }, h('h2', {}, 'Output'), h('pre', { class: 'output-text', id: 'output-text', tabindex: '0' }, outputText));
  }
  // What the model was shown: the image run.py drew (an image classifier's input), or the text
  // it read (a translator's source sentence, a reranker's queries and documents).
  const sourceText = source ? h('pre', { class: 'output-text', id: 'input-text', tabindex: '0' }, source) : null;
  let input = null;
  if (data.images?.input_image) {
    input = h('section', { class: 'card' }, h('h2', {}, 'Input'),
      h('div', { class: 'image-pair' }, figure('input_image', 'The first image run.py draws and gives the model (input.png)', 'The input image run.py draws: its first of the batch')));
  } else if (data.images?.input_audio) {
    // A speech recognizer's clip: a player, and what run.py says it gave the model.
    input = h('section', { class: 'card' }, h('h2', {}, 'Input'),
      h('figure', { class: 'input-audio' },
        h('audio', { controls: true, preload: 'metadata', src: data.images.input_audio, id: 'input-audio' }),
        h('figcaption', {}, 'The clip run.py synthesizes, writes as input.wav and gives the model')),
      sourceText);
  } else if (source) {
    input = h('section', { class: 'card' }, h('h2', {}, 'Input'),
      h('p', { class: 'muted' }, 'What run.py gives the model (and what the model’s family adds to it, in brackets):'),
      sourceText);
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

  const stackChoices = census ? (versions.census || []).filter((item) => item.backend === data.stack?.backend)
    : stackOptions(versions, data.stack?.backend);
  const stackSelect = data.stack ? selectControl('model-stack', 'Stack',
    stackChoices.map((item) => ({ value: `${item.compiler_version}\n${item.library_version}`, label: stackLabel(item) })),
    `${data.stack.compiler_version}\n${data.stack.library_version}`,
    (value) => {
      const [compilerVersion, libraryVersion] = value.split('\n');
      navigate(modelUrl(data.id, { task: data.task, backend: data.stack.backend, compiler_version: compilerVersion, library_version: libraryVersion }));
    }) : null;

  // replaceChildren would draw a null as the text "null": the sections a page lacks are left out.
  root.replaceChildren(...[
    h('nav', { class: 'crumbs' }, h('a', { href: back, 'data-nav': true }, census ? '← Architectures' : '← All models')),
    h('section', { class: 'card model-head' },
      h('div', { class: 'title-row' },
        h('h1', { class: 'model-title' }, data.id),
        census ? null : h('a', { class: 'hub-link', href: `https://huggingface.co/${data.id}`, rel: 'noopener noreferrer', target: '_blank' }, 'View on the Hub ↗')),
      h('p', { class: 'stack-line' }, h('span', { class: 'chip' }, data.task),
        data.stack ? [' ', h('span', { class: 'chip' }, data.stack.backend), ` ${stackLabel(data.stack)}`,
          verdict && verdict.library !== data.stack.library ? h('span', { id: 'task-library' }, ` · ${verdict.library} ${verdict.library_version}`) : null] : null),
      stackSelect ? h('div', { class: 'controls compact' }, stackSelect,
        data.tasks.length > 1 ? selectControl('model-task', 'Task', data.tasks.map((name) => ({ value: name, label: name })), data.task,
          (value) => navigate(modelUrl(data.id, { ...state.params, task: value }))) : null) : null,
      facts, notices),
    howWellCard(verdict),
    input,
    output,
    reproduce.length ? h('section', { class: 'card' }, h('h2', {}, 'Reproduce'), h('ol', { class: 'steps' }, reproduce)) : null,
    stackTable ? h('section', { class: 'card' }, h('h2', {}, 'Stack'), stackTable) : null,
    data.backends && data.backends.length ? h('section', { class: 'card' }, h('h2', {}, 'Across backends (latest verdict on each)'), backendsTable(data)) : null,
    h('section', { class: 'card' }, h('h2', {}, 'History across versions'),
      data.history.length ? historyTable(data) : h('p', { class: 'muted' }, 'No results on any stack yet.'))].filter(Boolean));
  document.title = `canrun — ${data.id}`;
}
