// How figures and reasons read on the page: '—' stands for a missing figure everywhere.

export function formatSeconds(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export function formatBytes(bytes) {
  if (bytes === null || bytes === undefined) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

export function formatCount(count) {
  if (count === null || count === undefined) return '—';
  if (count >= 1e6) return `${(count / 1e6).toFixed(1)}M`;
  if (count >= 1e3) return `${(count / 1e3).toFixed(1)}k`;
  return String(count);
}

export function formatTokensPerSecond(rate) {
  return rate === null || rate === undefined ? '—' : `${rate.toFixed(1)} tok/s`;
}

/** A time that is often under a second (the first token): '40 ms', else as formatSeconds. */
export function formatLatency(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  return seconds < 1 ? `${Math.round(seconds * 1000)} ms` : formatSeconds(seconds);
}

/** A speedup over eager: '1.95×'. */
export function formatSpeedup(speedup) {
  return speedup === null || speedup === undefined ? '—' : `${speedup.toFixed(2)}×`;
}

/** A memory ratio (eager peak ÷ compiled peak): '0.94'. */
export function formatRatio(ratio) {
  return ratio === null || ratio === undefined ? '—' : ratio.toFixed(2);
}

/** A share (0–1) as a percentage: '87.5 %', the sign never on a line of its own. */
export function formatShare(share) {
  return share === null || share === undefined ? '—' : `${(100 * share).toFixed(1)}\u00a0%`;
}

// A PASS is for the 32-token check: a long generation that drifted from the CPU reference
// (drifts_after) is shown beside it wherever the verdict is, never left as a silent PASS.
export const DRIFT_MEANING = 'The long generation’s teacher-forced agreement with the CPU reference fell below 90 %: the PASS is for the 32-token check only.';

/** What a drifting verdict says beside it: 'drifts after token 57'. */
export const driftText = (driftsAfter) => `drifts after token ${driftsAfter}`;

/** counted(2, 'fix', 'fixes') is '2 fixes'; counted(1, 'core') is '1 core'. */
export function counted(count, singular, plural = `${singular}s`) {
  return `${count} ${count === 1 ? singular : plural}`;
}

/** A stack without its backend: 'inductor 2.13.0 · transformers 5.19.0'. */
export function stackLabel(stack) {
  return `${stack.compiler} ${stack.compiler_version} · ${stack.library} ${stack.library_version}`;
}

const REASON_TEXT = {
  low_priority: 'low priority', incompatible: 'incompatible', gated: 'gated',
  remote_code: 'needs remote code', too_large: 'too large', no_parallel_plan: 'no parallel plan',
  no_safetensors: 'no safetensors', unsupported_task: 'unsupported task', note: 'curator’s note',
  other_task: 'another task', build_failed: 'could not be built',
};

/** An exclusion reason as the dataset names it ('remote_code'), in words. */
export function reasonText(reason) {
  return REASON_TEXT[reason] || reason;
}

// A plan predicted for a model not tested on the stack (from the Hub's parameter counts and the
// stack's parallel plans): shown apart from verdicts, always labelled "predicted".
export function predictedText(predicted) {
  if (predicted.exclusion) return `predicted: ${reasonText(predicted.exclusion)}`;
  const open = predicted.parallelism === null && predicted.cores > 1;
  const how = open ? ' · TP or EP' : (predicted.parallelism && predicted.parallelism !== 'none' ? ` · ${predicted.parallelism}` : '');
  return `predicted: ${counted(predicted.cores, 'core')}${how}`;
}

// The census line of a model not tested on the stack: its model type's census verdicts there
// (a tiny random-weight checkpoint of the type), evidence from the architecture and never the
// model's verdict. The API writes the line; the page adds where it comes from.
export const CENSUS_MEANING = 'Evidence from the architecture, not this model’s verdict: canrun’s census tested a tiny random-weight checkpoint of this model type on this stack.';
