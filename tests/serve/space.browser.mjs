// Browser tier: the Space in Debian's headless chromium, driven by playwright-core.
// Run by test_browser.py, which starts `canrun serve` on the fixture of space_data.py and sets
// SPACE_URL and ARTIFACTS_DIR. Screenshots of the main view and a model page (laptop and phone
// widths) are saved in ARTIFACTS_DIR.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { settled, useChromium } from './chromium.mjs';

const base = process.env.SPACE_URL;
const artifacts = process.env.ARTIFACTS_DIR;
assert.ok(base && artifacts, 'SPACE_URL and ARTIFACTS_DIR must be set (run through test_browser.py)');
mkdirSync(artifacts, { recursive: true });
const openPage = useChromium(base, { permissions: ['clipboard-read', 'clipboard-write'] });

const rowIds = (page) => page.locator('table.models tbody a.model-link').allTextContents();
const statusOf = (page, id) =>
  page.locator('table.models tbody tr', { has: page.getByRole('link', { name: id, exact: true }) })
    .locator('.badge').first().textContent();
const badgeClassOf = (page, id) =>
  page.locator('table.models tbody tr', { has: page.getByRole('link', { name: id, exact: true }) })
    .locator('.badge').first().getAttribute('class');

test('opens on Selected, in the curator order, with verdicts and exclusion reasons', async () => {
  const page = await openPage('/');
  assert.equal(await page.getByRole('tab', { selected: true }).textContent(), 'Selected');
  const ids = await rowIds(page);
  assert.equal(ids[0], 'Qwen/Qwen3-0.6B');
  assert.equal(ids.length, 7);
  assert.equal(await statusOf(page, 'Qwen/Qwen3-0.6B'), 'FAIL_COMPILE');  // newest stack by default
  assert.equal(await statusOf(page, 'meta-llama/Llama-3.2-1B-Instruct'), 'EXCLUDED');
  assert.match(await page.locator('tr', { hasText: 'meta-llama/Llama-3.2-1B-Instruct' }).textContent(), /gated/);
  assert.equal(await statusOf(page, 'HuggingFaceTB/SmolLM2-135M-Instruct'), 'Not tested');
  // Badges take the display class the API gives with each status.
  assert.equal(await badgeClassOf(page, 'Qwen/Qwen3-0.6B'), 'badge fail');
  assert.equal(await badgeClassOf(page, 'openai-community/gpt2'), 'badge pass');
  assert.equal(await badgeClassOf(page, 'meta-llama/Llama-3.2-1B-Instruct'), 'badge excluded');
  assert.equal(await badgeClassOf(page, 'HuggingFaceTB/SmolLM2-135M-Instruct'), 'badge untested');
  assert.equal(await page.locator('#compiler_version').inputValue(), '2.17.1.0+5e6f7a8b');
  await page.screenshot({ path: join(artifacts, 'main-laptop.png'), fullPage: true });
  await page.close();
});

test('switching views and tasks changes the table and the URL', async () => {
  const page = await openPage('/');
  await page.getByRole('tab', { name: 'Downloads' }).click();
  await page.waitForURL(/view=downloads/);
  await settled(page);
  await page.waitForFunction(() => document.querySelectorAll('table.models tbody tr').length === 36);
  assert.equal((await rowIds(page))[0], 'Qwen/Qwen3-0.6B');
  await page.getByRole('tab', { name: 'Trending' }).click();
  await page.waitForURL(/view=trending/);
  await settled(page);
  await page.waitForFunction(() => document.querySelector('table.models tbody a.model-link')?.textContent === 'community-29/tiny-model-29');
  // Keyboard: arrow keys move between tabs.
  await page.getByRole('tab', { name: 'Trending' }).focus();
  await page.keyboard.press('ArrowRight');
  await page.waitForURL(/view=downloads/);
  await settled(page);
  await page.waitForFunction(() => document.activeElement?.id === 'tab-downloads');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.activeElement?.id === 'tab-tested');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.activeElement?.id === 'tab-architectures');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.activeElement?.id === 'tab-selected');
  assert.equal(await page.getByRole('tab', { selected: true }).textContent(), 'Selected');
  assert.equal(new URL(page.url()).search, '');
  // Tasks: every task with data, in the registry's order; the task filter holds.
  await page.locator('#task').selectOption('text-generation');
  await page.waitForURL(/task=text-generation/);
  await settled(page);
  assert.deepEqual(await page.locator('#task option').allTextContents(),
    ['text-generation', 'sentence-similarity', 'text-classification', 'text-to-image']);
  await page.locator('#backend').selectOption('cpu');
  await page.waitForURL(/backend=cpu/);
  await settled(page);
  await page.locator('#task').selectOption('sentence-similarity');
  await page.waitForURL(/task=sentence-similarity/);
  await settled(page);
  await page.getByRole('tab', { name: 'Tested' }).click();
  await page.waitForURL(/view=tested/);
  await settled(page);
  assert.deepEqual(await rowIds(page), ['sentence-transformers/all-MiniLM-L6-v2']);
  await page.close();
});

test('search narrows the table as you type, case-insensitively', async () => {
  const page = await openPage('/?view=downloads');
  await page.locator('#search').pressSequentially('QWEN3', { delay: 30 });
  await page.waitForURL(/q=QWEN3/);
  await settled(page);
  await page.waitForFunction(() => document.querySelectorAll('table.models tbody tr').length === 2);
  assert.deepEqual(await rowIds(page), ['Qwen/Qwen3-0.6B', 'Qwen/Qwen3-8B']);
  assert.equal(await page.locator('#search').evaluate((node) => node === document.activeElement), true);
  await page.locator('#search').fill('no-such-model-anywhere');
  await page.waitForSelector('.empty');
  assert.match(await page.locator('.empty').textContent(), /No model matches/);
  await page.close();
});

test('a version switch changes verdicts', async () => {
  const page = await openPage('/');
  assert.equal(await statusOf(page, 'Qwen/Qwen3-0.6B'), 'FAIL_COMPILE');
  await page.locator('#compiler_version').selectOption('2.16.372.0+4a9b2326');
  await page.waitForURL(/compiler_version=2\.16\.372\.0/);
  await settled(page);
  await page.waitForFunction(() => document.querySelector('#compiler_version').value.startsWith('2.16'));
  assert.equal(await statusOf(page, 'Qwen/Qwen3-0.6B'), 'PASS');
  // Newest first, by number: 2.17 > 2.16 > 2.9.
  assert.deepEqual(await page.locator('#compiler_version option').allTextContents(),
    ['2.17.1.0+5e6f7a8b', '2.16.372.0+4a9b2326', '2.9.1.0+1a2b3c4d']);
  await page.locator('#backend').selectOption('cpu');
  await page.waitForURL(/backend=cpu/);
  await settled(page);
  await page.waitForFunction(() => document.querySelector('#compiler_version').value === '2.13.0');
  assert.equal(await statusOf(page, 'Qwen/Qwen3-0.6B'), 'PASS');
  await page.close();
});

test('model page shows run.py, packages, the cache command and history; copy copies', async () => {
  const page = await openPage('/?compiler_version=2.16.372.0%2B4a9b2326');
  await page.getByRole('link', { name: 'Qwen/Qwen3-0.6B', exact: true }).click();
  await page.waitForURL(/\/model\/Qwen\/Qwen3-0\.6B/);
  await settled(page);
  await page.waitForSelector('#run-py');
  assert.match(await page.locator('#run-py').textContent(), /from_pretrained\("Qwen\/Qwen3-0.6B"/);
  assert.equal(await page.locator('#packages').textContent(), 'pip install torch-neuronx==2.13.3.0 neuronx-cc==2.16.372.0');
  assert.equal(await page.locator('#prefetch').textContent(),
    'hf buckets sync hf://buckets/aws-neuron/torch-neuronx-neff-cache/neuronxcc-2.16.372.0+4a9b2326 "${TORCH_NEURONX_NEFF_CACHE_DIR:-/tmp/neff_cache}"');
  assert.equal(await page.locator('#run-command').textContent(), 'python3 run.py');
  assert.equal(await page.locator('#verified').textContent(), '32/32 tokens match the CPU reference');
  const history = page.locator('table.history tbody tr');
  assert.equal(await history.count(), 4);
  assert.match(await history.nth(1).textContent(), /^2\.17\.1\.0\+5e6f7a8b5\.18\.0FAIL_COMPILE▼ regression/);
  assert.doesNotMatch(await history.nth(0).textContent(), /regression/);
  await page.getByRole('button', { name: 'Copy run.py' }).click();
  await page.waitForFunction(() => document.getElementById('toast').textContent === 'run.py copied');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.match(copied, /^# run\.py: Qwen\/Qwen3-0\.6B on neuron/);
  assert.equal(await page.locator('#run-log').count(), 0);  // a PASS keeps no log
  await page.screenshot({ path: join(artifacts, 'model-laptop.png'), fullPage: true });
  await page.close();
});

test("a sharded verdict's page says the judge and the agreement decided it, and how the tokens compare", async () => {
  const page = await openPage('/model/openai-community/gpt2');
  await settled(page);
  await page.waitForSelector('#verified');
  assert.equal(await page.locator('#verified').textContent(),
    'decided by the judge and the agreement: judge SmolLM2-135M-Instruct: 2.41 ≥ 0.79 (fluent); '
    + 'teacher-forced agreement with the CPU reference 96.9%; 29/32 tokens match the CPU reference');
  await page.close();
});

test('back/forward and reload keep the state', async () => {
  const page = await openPage('/');
  await page.getByRole('tab', { name: 'Downloads' }).click();
  await page.waitForURL(/view=downloads/);
  await settled(page);
  await page.locator('#compiler_version').selectOption('2.9.1.0+1a2b3c4d');
  await page.waitForURL(/compiler_version=2\.9/);
  await settled(page);
  await page.waitForFunction(() => document.querySelector('#compiler_version').value.startsWith('2.9'));
  await page.getByRole('link', { name: 'google/gemma-3-1b-it', exact: true }).click();
  await page.waitForURL(/\/model\/google/);
  await settled(page);
  assert.equal(await page.locator('.facts .badge').first().textContent(), 'FAIL_COMPILE');
  await page.goBack();
  await settled(page);
  assert.equal(await page.getByRole('tab', { selected: true }).textContent(), 'Downloads');
  assert.equal(await page.locator('#compiler_version').inputValue(), '2.9.1.0+1a2b3c4d');
  await page.goForward();
  await settled(page);
  assert.equal(await page.locator('.model-title').textContent(), 'google/gemma-3-1b-it');
  await page.reload();
  await settled(page);
  assert.equal(await page.locator('.facts .badge').first().textContent(), 'FAIL_COMPILE');
  await page.goBack();
  await settled(page);
  await page.reload();
  await settled(page);
  assert.equal(await page.getByRole('tab', { selected: true }).textContent(), 'Downloads');
  assert.equal(await statusOf(page, 'google/gemma-3-1b-it'), 'FAIL_COMPILE');
  await page.close();
});

test('error texts and notes holding <script> and HTML render as text', async () => {
  const page = await openPage('/');
  const row = page.locator('tr', { hasText: 'acme-labs/html-note-model' });
  assert.equal(await row.locator('.note').textContent(),
    'Curated <b>bold</b> <script>window.__canrunXss = 3</script>');
  assert.equal(await page.locator('.note b').count(), 0);
  await page.getByRole('link', { name: 'acme-labs/html-note-model', exact: true }).click();
  await page.waitForURL(/\/model\/acme-labs/);
  await settled(page);
  assert.match(await page.locator('#error-text').textContent(), /<script>window.__canrunXss = 1<\/script> <img src=x/);
  // The failure's full log, opened from the page: text too.
  await page.locator('#run-log summary').click();
  await page.waitForFunction(() => document.getElementById('run-log-text').textContent.includes('Traceback'));
  const log = await page.locator('#run-log-text').textContent();
  assert.match(log, /^\[canrun: run\.py's stdout\]\nloading <b>weights<\/b>\n/);
  assert.match(log, /<script>window.__canrunXss = 1<\/script>/);
  await page.screenshot({ path: join(artifacts, 'log-laptop.png'), fullPage: true });
  assert.equal(await page.locator('#main img, #main script, .notice b, #run-log b').count(), 0);
  assert.equal(await page.evaluate(() => window.__canrunXss), undefined);
  await page.close();
});

test('bad parameters in a shared URL show the server error, as text', async () => {
  const page = await openPage('/?compiler_version=%3Cb%3E9.9%3C%2Fb%3E');
  const box = page.locator('.error-box');
  assert.match(await box.textContent(), /compiler_version "<b>9.9<\/b>" has no results/);
  assert.equal(await box.locator('b').count(), 0);
  await page.close();
});

test('Downloads shows predicted plans for untested models, apart from verdicts', async () => {
  const page = await openPage('/?view=downloads&q=community-1');
  await page.waitForFunction(() => document.querySelectorAll('table.models tbody tr').length > 5);
  const rowOf = (id) => page.locator('table.models tbody tr', { has: page.getByRole('link', { name: id, exact: true }) });
  const predicted = async (id) => (await rowOf(id).locator('.verdict-cell .predicted').allTextContents()).join('');
  assert.equal(await predicted('community-12/tiny-model-12'), 'predicted: 8 cores · tp');
  assert.equal(await rowOf('community-12/tiny-model-12').locator('.col-cores').textContent(), '~8');
  assert.equal(await predicted('community-13/tiny-model-13'), 'predicted: 4 cores · TP or EP');
  assert.equal(await predicted('community-14/tiny-model-14'), 'predicted: no parallel plan');
  assert.equal(await predicted('community-15/tiny-model-15'), 'predicted: too large');
  // Every predicted row still says Not tested; tested rows carry no prediction.
  for (const id of ['community-12/tiny-model-12', 'community-15/tiny-model-15']) {
    assert.equal(await rowOf(id).locator('.badge').textContent(), 'Not tested');
  }
  assert.equal(await rowOf('community-11/tiny-model-11').locator('.predicted').count(), 0);
  assert.match(await rowOf('community-12/tiny-model-12').locator('.verdict-cell .predicted').getAttribute('title'),
    /transformers 5\.19\.0 has a TP plan for llama/);
  await page.screenshot({ path: join(artifacts, 'predicted-laptop.png'), fullPage: true });
  await page.getByRole('link', { name: 'community-12/tiny-model-12', exact: true }).click();
  await page.waitForURL(/\/model\/community-12/);
  await settled(page);
  assert.match(await page.locator('#predicted-plan').textContent(), /^Predicted: 8 cores · tp — .* not a verdict\.$/);
  await page.close();
  const phone = await openPage('/?view=downloads&q=community-1', { width: 390, height: 844 });
  await phone.waitForFunction(() => document.querySelectorAll('table.models tbody tr').length > 5);
  await phone.screenshot({ path: join(artifacts, 'predicted-phone.png'), fullPage: true });
  await phone.close();
});

test('Architectures lists the census of the stack: verdicts, causes, claims; sorts, searches, links rows', async () => {
  for (const [viewport, name] of [[undefined, 'architectures-laptop'], [{ width: 390, height: 844 }, 'architectures-phone']]) {
    // From a task the census does not cover: the view falls back to the census's first task.
    const page = await openPage('/?view=architectures&task=sentence-similarity', viewport);
    const types = () => page.locator('#architectures-table tbody a.model-link').allTextContents();
    assert.deepEqual(await types(), ['bart', 'bloom', 'gpt2', 'gptj', 'llama', 'mixtral']);
    assert.equal(await page.locator('#task').inputValue(), 'text-generation');
    assert.equal(await page.locator('#census-stack').inputValue(), 'neuron__neuronx-cc-2.17.1.0+5e6f7a8b__transformers-5.19.0');
    const row = (type) => page.locator(`#type-${type}`);
    assert.match(await row('mixtral').textContent(), /PASS.*FAIL_COMPILE.*expert parallel.*dynamo unsupported: fake tensor of a dtensor/);
    assert.match(await row('gptj').textContent(), /no parallel plan/);
    assert.match(await row('bloom').textContent(), /FAIL_RUNTIME.*not run: fails on one core/);
    assert.match(await row('bart').textContent(), /EXCLUDED.*another task/);
    assert.match(await page.locator('#counts-one-core').textContent(), /PASS 4.*FAIL_RUNTIME 1.*EXCLUDED another task 1/);
    assert.match(await page.locator('#counts-sharded').textContent(), /PASS tp 1.*FAIL_COMPILE ep 1.*EXCLUDED no parallel plan 2/);
    if (!viewport) {
      assert.match(await row('llama').locator('.col-claims').textContent(), /full graph · TP plan/);
      assert.equal(await row('llama').locator('.col-ranked').textContent(), '3');
    }
    await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
    if (viewport) { await page.close(); continue; }
    // Sort by the sharded verdict, then search; the URL keeps both.
    await page.locator('#sort-sharded').click();
    await page.waitForURL(/sort=sharded/);
    await settled(page);
    assert.deepEqual((await types()).slice(0, 2), ['llama', 'mixtral']);
    await page.locator('#search').fill('MIX');
    await page.waitForURL(/q=MIX/);
    await settled(page);
    assert.deepEqual(await types(), ['mixtral']);
    // The other stack: mixtral's expert-parallel run passed there.
    await page.locator('#census-stack').selectOption('neuron__neuronx-cc-2.17.1.0+5e6f7a8b__transformers-5.18.0');
    await page.waitForURL(/transformers-5\.18\.0/);
    await settled(page);
    assert.match(await row('mixtral').textContent(), /PASS.*PASS.*expert parallel/);
    // A verdict links its census row's page: run.py, the stack, the history.
    await row('mixtral').locator('a.verdict-link').nth(1).click();
    await page.waitForURL(/\/model\/canrun-census-sharded\/mixtral/);
    await settled(page);
    assert.match(await page.locator('#census-row').textContent(), /A census row: a tiny random-weight checkpoint of the model type mixtral/);
    assert.equal(await page.locator('.hub-link').count(), 0);
    assert.match(await page.locator('.stack-line').first().textContent(), /transformers 5\.18\.0/);
    assert.ok(await page.locator('#run-py').count());
    await page.screenshot({ path: join(artifacts, 'census-row-laptop.png'), fullPage: true });
    await page.getByRole('link', { name: '← Architectures' }).click();
    await page.waitForURL(/view=architectures/);
    await settled(page);
    assert.deepEqual(await types(), ['mixtral']);
    await page.close();
  }
});

test('an untested model shows its architecture\'s census line, marked as such; a tested one its verdict only', async () => {
  for (const [viewport, suffix] of [[undefined, 'laptop'], [{ width: 390, height: 844 }, 'phone']]) {
    const page = await openPage('/?view=trending&q=-1', viewport);
    const rowOf = (id) => page.locator('table.models tbody tr', { has: page.getByRole('link', { name: id, exact: true }) });
    const line = rowOf('community-13/tiny-model-13').locator('.census-line');
    assert.equal(await line.textContent(), 'architecture mixtral: PASS on 1 core, FAIL_COMPILE expert parallel (census, random weights)');
    assert.match(await line.getAttribute('title'), /not this model’s verdict/);
    assert.equal(await rowOf('community-13/tiny-model-13').locator('.badge').first().textContent(), 'Not tested');
    assert.equal(await rowOf('community-16/tiny-model-16').locator('.census-line').textContent(),
      'architecture bloom: FAIL_RUNTIME on 1 core (census, random weights)');
    // Tested models (community-1 … 11) show their verdict, never a census line.
    assert.equal(await rowOf('community-1/tiny-model-1').locator('.census-line').count(), 0);
    assert.ok(await line.isVisible());
    await page.screenshot({ path: join(artifacts, `census-line-${suffix}.png`), fullPage: true });
    if (!viewport) {
      // The line links the type's row of the Architectures view.
      await line.click();
      await page.waitForURL(/view=architectures/);
      await settled(page);
      assert.deepEqual(await page.locator('#architectures-table tbody a.model-link').allTextContents(), ['mixtral']);
    }
    await page.close();
    // The model page: the census line beside the predicted plan, said to be the architecture's.
    const model = await openPage('/model/community-13/tiny-model-13', viewport);
    assert.match(await model.locator('#census-evidence').textContent(),
      /^Its architecture: architecture mixtral: PASS on 1 core, FAIL_COMPILE expert parallel \(census, random weights\)\. Evidence from the architecture, not this model’s verdict/);
    assert.ok(await model.locator('#predicted-plan').count());
    // An untested model's page lacks sections, and draws no trace of them.
    assert.doesNotMatch(await model.locator('#app').textContent(), /null/);
    await model.screenshot({ path: join(artifacts, `census-model-${suffix}.png`), fullPage: true });
    await model.close();
  }
  // gpt2's type is in the census, and gpt2 has a verdict: the verdict only.
  const tested = await openPage('/?view=downloads&q=gpt2');
  assert.equal(await tested.locator('table.models tbody tr .badge').first().textContent(), 'PASS');
  assert.equal(await tested.locator('.census-line').count(), 0);
  await tested.close();
  const gpt2 = await openPage('/model/openai-community/gpt2');
  assert.equal(await gpt2.locator('#census-evidence').count(), 0);
  await gpt2.close();
});

test('Tested lists every tested model, sorts by its column headers, and search works in it', async () => {
  const page = await openPage('/');
  await page.getByRole('tab', { name: 'Tested' }).click();
  await page.waitForURL(/view=tested/);
  await settled(page);
  let ids = await rowIds(page);
  assert.equal(ids.length, 17);  // every row of the newest stack, ranked or not
  assert.deepEqual(ids, [...ids].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())));
  assert.ok(ids.includes('community-11/tiny-model-11'));
  await page.locator('#sort-runtime').click();
  await page.waitForURL(/sort=runtime/);
  await settled(page);
  ids = await rowIds(page);
  assert.equal(ids[0], 'community-1/tiny-model-1');
  assert.equal(await page.locator('th[aria-sort="ascending"]').textContent(), 'Run time ↑');
  assert.match(await page.locator('table.models tbody tr').first().textContent(), /48\.8 tok\/s/);
  await page.screenshot({ path: join(artifacts, 'tested-laptop.png'), fullPage: true });
  await page.locator('#search').fill('qwen');
  await page.waitForURL(/q=qwen/);
  await settled(page);
  assert.deepEqual(await rowIds(page), ['Qwen/Qwen3-0.6B', 'Qwen/Qwen3-8B']);
  assert.match(page.url(), /sort=runtime/);  // the sort is part of the shareable URL
  await page.close();
});

test('failure causes group the stack\'s failures, linked from the counts', async () => {
  const page = await openPage('/');
  await page.locator('#causes-link').click();
  await page.waitForURL(/\/causes\?/);
  await settled(page);
  assert.match(await page.locator('.hero .lede').textContent(), /6 failures in 4 causes/);
  const first = page.locator('#cause-1');
  assert.match(await first.locator('.cause-title').textContent(), /3 ×\s*timeout/);
  assert.deepEqual(await first.locator('.cause-models a').allTextContents(),
    ['community-3/tiny-model-3', 'community-6/tiny-model-6', 'community-9/tiny-model-9']);
  assert.equal(await page.locator('#cause-2 pre').textContent(), 'neuronx-cc: error: unsupported op aten::foo');
  // Hostile error text stays text.
  assert.equal(await page.locator('.cause script, .cause img').count(), 0);
  await page.screenshot({ path: join(artifacts, 'causes-laptop.png'), fullPage: true });
  await first.locator('.cause-models a').first().click();
  await page.waitForURL(/\/model\/community-3/);
  await settled(page);
  await page.close();
  const phone = await openPage('/causes', { width: 390, height: 844 });
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `causes page scrolls sideways by ${overflow}px`);
  await phone.screenshot({ path: join(artifacts, 'causes-phone.png'), fullPage: true });
  await phone.close();
});

test('compare two stacks: regressions by the one rule, a shareable URL', async () => {
  const page = await openPage('/?compiler_version=2.17.1.0%2B5e6f7a8b&library_version=5.18.0');
  await page.locator('#compare-link').click();
  await page.waitForURL(/\/compare\?/);
  await settled(page);
  // B is the stack on screen, A the one before it on its backend.
  assert.match(await page.locator('#compare-b option:checked').textContent(), /2\.17\.1\.0\+5e6f7a8b · transformers 5\.18\.0/);
  assert.match(await page.locator('#compare-a option:checked').textContent(), /2\.16\.372\.0/);
  assert.deepEqual(await page.locator('#compare-regressions li a').allTextContents(), ['Qwen/Qwen3-0.6B']);
  assert.match(await page.locator('#compare-regressions li').textContent(), /PASS → FAIL_COMPILE/);
  assert.equal(await page.locator('#compare-newly_tested li').count(), 12);
  await page.screenshot({ path: join(artifacts, 'compare-laptop.png'), fullPage: true });
  // Swap: the regression becomes a fix, and the URL says so.
  const url = new URL(page.url());
  const swapped = `/compare?a=${encodeURIComponent(url.searchParams.get('b'))}&b=${encodeURIComponent(url.searchParams.get('a'))}`;
  await page.close();
  const again = await openPage(swapped);
  assert.deepEqual(await again.locator('#compare-fixes li a').allTextContents(), ['Qwen/Qwen3-0.6B']);
  assert.equal(await again.locator('#compare-regressions li').count(), 0);
  await again.close();
  const phone = await openPage(swapped, { width: 390, height: 844 });
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `compare page scrolls sideways by ${overflow}px`);
  await phone.screenshot({ path: join(artifacts, 'compare-phone.png'), fullPage: true });
  await phone.close();
});

test('a model page shows the latest verdict on every backend side by side, and what PASS means', async () => {
  const page = await openPage('/model/Qwen/Qwen3-0.6B');
  const rows = page.locator('#backends-table tbody tr');
  assert.equal(await rows.count(), 2);
  assert.match(await rows.nth(0).textContent(), /neuron.*2\.17\.1\.0\+5e6f7a8b.*5\.19\.0.*FAIL_COMPILE/);
  assert.match(await rows.nth(1).textContent(), /cpu.*inductor 2\.13\.0.*PASS/);
  assert.match(await page.locator('#meaning').textContent(), /PASS is about correctness.*32 greedy tokens at batch 1/);
  await page.close();
});

test('a text-to-image model page shows the backend image beside the CPU reference image', async () => {
  for (const [viewport, name] of [[undefined, 'image-laptop'], [{ width: 390, height: 844 }, 'image-phone']]) {
    const page = await openPage('/model/canrun-fixtures/tiny-sd?task=text-to-image&backend=cpu', viewport);
    await page.waitForSelector('#image-image');
    for (const id of ['#image-image', '#image-reference-image']) {
      // Loaded from the dataset's images/ through /api/image: a real 32 × 32 PNG.
      await page.waitForFunction((selector) => document.querySelector(selector)?.complete, id);
      assert.equal(await page.locator(id).evaluate((img) => img.naturalWidth), 32, id);
    }
    assert.deepEqual(await page.locator('.output-image figcaption').allTextContents(), ['On cpu', 'CPU reference']);
    assert.match(await page.locator('#output-text').textContent(), /PSNR 48\.1 dB.*SSIM 0\.9990/);
    assert.match(await page.locator('.stack-line').textContent(), /transformers 5\.18\.0 · diffusers 0\.42\.1/);
    assert.match(await page.locator('.facts').textContent(), /Throughput14\.2 steps\/s/);
    assert.match(await page.locator('#meaning').textContent(), /fixed inputs after compiling/);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `model page scrolls sideways by ${overflow}px`);
    await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
    await page.close();
  }
  // An embedding verdict shows its agreement figures as its output.
  const page = await openPage('/model/sentence-transformers/all-MiniLM-L6-v2?task=sentence-similarity&backend=cpu');
  assert.match(await page.locator('#output-text').textContent(), /lowest cosine similarity with the CPU reference 1\.000000/);
  await page.close();
});

test('phone width: the table and the model page fit', async () => {
  const phone = { width: 390, height: 844 };
  let page = await openPage('/', phone);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `page scrolls sideways by ${overflow}px`);
  await page.screenshot({ path: join(artifacts, 'main-phone.png'), fullPage: true });
  await page.close();
  page = await openPage('/model/Qwen/Qwen3-0.6B?compiler_version=2.16.372.0%2B4a9b2326', phone);
  await page.waitForSelector('#run-py');
  const modelOverflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(modelOverflow <= 0, `model page scrolls sideways by ${modelOverflow}px`);
  await page.screenshot({ path: join(artifacts, 'model-phone.png'), fullPage: true });
  await page.close();
});

// How well: the stack's dashboard figures above its table, drawn from the API's summary.
const summaryOf = (page, query) => page.evaluate(async (path) => (await (await fetch(path)).json()).summary, `/api/models?${query}`);
const noBrokenText = async (page) => assert.doesNotMatch(await page.locator('#app').textContent(), /null|undefined|NaN/);

test('the stack\'s figures sit above its table, alarms marked; a drifting PASS says so in the row', async () => {
  for (const [viewport, suffix] of [[undefined, 'laptop'], [{ width: 390, height: 844 }, 'phone']]) {
    const page = await openPage('/', viewport);
    const summary = await summaryOf(page, 'task=text-generation');
    const line = await page.locator('#perf-summary .perf-line').textContent();
    assert.ok(line.includes(`pass rate ${(100 * summary.pass_rate).toFixed(1)}\u00a0% (${summary.passed}/${summary.tested})`), line);
    assert.ok(line.includes(`speedup ${summary.geomean_speedup.toFixed(2)}× geomean (${summary.with_baseline} PASS)`), line);
    assert.ok(line.includes(`memory ratio ${summary.geomean_memory_ratio.toFixed(2)} geomean (rss)`), line);
    assert.ok(line.includes('compile 3 min 0 s median'), line);
    assert.ok(line.includes(`${summary.drifting} of ${summary.with_long_generation} drift in the long generation`), line);
    // Above the table; every alarm that fires is shown, in the warning style.
    const [summaryBox, tableBox] = [await page.locator('#perf-summary').boundingBox(), await page.locator('table.models').boundingBox()];
    assert.ok(summaryBox.y + summaryBox.height <= tableBox.y, 'the summary is above the table');
    assert.ok(summary.alarms.length > 0);
    assert.deepEqual(await page.locator('#perf-summary .alarm').allTextContents(), summary.alarms);
    assert.equal(await page.locator('#perf-summary .alarm').first().evaluate((node) => getComputedStyle(node).backgroundColor), 'rgb(254, 243, 199)');
    // gemma passes and drifts: the badge beside its PASS; gpt2's long generation held.
    const rowOf = (id) => page.locator('table.models tbody tr', { has: page.getByRole('link', { name: id, exact: true }) });
    assert.equal(await rowOf('google/gemma-3-1b-it').locator('.badge').first().textContent(), 'PASS');
    assert.equal(await rowOf('google/gemma-3-1b-it').locator('.badge.drift').textContent(), 'drifts after token 57');
    assert.ok(await rowOf('google/gemma-3-1b-it').locator('.badge.drift').isVisible());
    assert.equal(await rowOf('openai-community/gpt2').locator('.badge.drift').count(), 0);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `page scrolls sideways by ${overflow}px`);
    await noBrokenText(page);
    await page.screenshot({ path: join(artifacts, `summary-${suffix}.png`), fullPage: true });
    await page.close();
  }
  // A stack whose rows predate the eager baseline: said so, nothing broken.
  const old = await openPage('/?compiler_version=2.16.372.0%2B4a9b2326');
  assert.equal(await old.locator('#perf-speedup').textContent(), 'no eager baseline');
  assert.equal(await old.locator('#perf-memory, #perf-drift, .badge.drift').count(), 0);
  await noBrokenText(old);
  await old.close();
});

test('Tested sorts by speedup, largest first, shown as 1.95×', async () => {
  const page = await openPage('/?view=tested');
  await page.locator('#sort-speedup').click();
  await page.waitForURL(/sort=speedup/);
  await settled(page);
  assert.deepEqual((await rowIds(page)).slice(0, 2), ['openai-community/gpt2', 'google/gemma-3-1b-it']);
  assert.equal(await page.locator('th[aria-sort="descending"]').textContent(), 'Speedup ↓');
  assert.deepEqual((await page.locator('table.models tbody td.col-speedup').allTextContents()).slice(0, 3), ['1.95×', '1.20×', '—']);
  await page.screenshot({ path: join(artifacts, 'tested-speedup-laptop.png'), fullPage: true });
  await page.close();
  const phone = await openPage('/?view=tested&sort=speedup', { width: 390, height: 844 });
  assert.match(await phone.locator('table.models tbody tr').first().locator('.phone-meta').textContent(), /1\.95× over eager/);
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `tested view scrolls sideways by ${overflow}px`);
  await phone.screenshot({ path: join(artifacts, 'tested-speedup-phone.png'), fullPage: true });
  await phone.close();
});

test('a model page says how well it ran: speedup, eager beside compiled, how memory was read, the long generation', async () => {
  for (const [viewport, suffix] of [[undefined, 'laptop'], [{ width: 390, height: 844 }, 'phone']]) {
    const page = await openPage('/model/openai-community/gpt2', viewport);
    const card = page.locator('#how-well');
    assert.ok(await card.isVisible());
    assert.equal(await page.locator('#how-well-speedup').textContent(), '1.95× over eager');
    assert.equal(await page.locator('#how-well-compile').textContent(), '3 min 0 s');
    assert.equal(await page.locator('#how-well-memory-ratio').textContent(), '0.83');
    const cells = async (idx) => page.locator('#how-well-table tbody tr').nth(idx).locator('th, td').allTextContents();
    assert.deepEqual(await cells(0), ['Throughput', '25.0 tokens/s', '48.8 tokens/s']);
    assert.deepEqual(await cells(1), ['First token', '310 ms', '40 ms']);
    assert.deepEqual(await cells(2), ['Peak memory', '2.5 GiB', '3.0 GiB']);
    assert.equal(await page.locator('#memory-meaning').textContent(),
      'Peak memory is the maximum resident size of run.py and its compile workers; it only grows, so the compiled peak includes the eager run’s and the compiler’s.');
    assert.equal(await page.locator('#long-generation').textContent(),
      '128 tokens · 47.5 tok/s · teacher-forced agreement with the CPU reference 98.4\u00a0%, on the same compiled graphs.');
    assert.equal(await page.locator('#drift-line, #verdict-drift, #eager-note').count(), 0);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `model page scrolls sideways by ${overflow}px`);
    const tableOverflow = await page.locator('.how-well-wrap').evaluate((node) => node.scrollWidth - node.clientWidth);
    assert.ok(tableOverflow <= 0, `the eager/compiled table scrolls sideways by ${tableOverflow}px`);
    await noBrokenText(page);
    await card.screenshot({ path: join(artifacts, `how-well-${suffix}.png`) });
    await page.close();
    // A PASS whose long generation drifted: beside the verdict and loudly in the card.
    const drifting = await openPage('/model/google/gemma-3-1b-it', viewport);
    assert.equal(await drifting.locator('#verdict-drift').textContent(), 'drifts after token 57');
    assert.match(await drifting.locator('#drift-line').textContent(), /^⚠ Drifts after token 57\. .*fell below 90 %: the PASS is for the 32-token check only\.$/);
    assert.ok(await drifting.locator('#drift-line').isVisible());
    await drifting.screenshot({ path: join(artifacts, `drift-${suffix}.png`), fullPage: true });
    await drifting.close();
  }
  // An eager baseline cut short: its note, and no speedup.
  const cut = await openPage('/model/community-1/tiny-model-1');
  assert.match(await cut.locator('#eager-note').textContent(), /^Eager baseline: eager baseline cut at the profile's eager_max_s/);
  assert.equal(await cut.locator('#how-well-speedup').textContent(), 'no eager baseline');
  await noBrokenText(cut);
  await cut.close();
  // A row from before the eager baseline: no card, nothing broken.
  const old = await openPage('/model/openai-community/gpt2?compiler_version=2.16.372.0%2B4a9b2326');
  assert.equal(await old.locator('#how-well').count(), 0);
  await noBrokenText(old);
  await old.close();
});

test('compare lists speedup and compile-time changes', async () => {
  const page = await openPage(`/compare?a=${encodeURIComponent('neuron__neuronx-cc-2.17.1.0+5e6f7a8b__transformers-5.18.0')}`
    + `&b=${encodeURIComponent('neuron__neuronx-cc-2.17.1.0+5e6f7a8b__transformers-5.19.0')}&task=text-generation`);
  assert.deepEqual(await page.locator('#compare-speedup_changes li').allTextContents(),
    ['openai-community/gpt2 · text-generation · 1.50× → 1.95×']);
  assert.deepEqual(await page.locator('#compare-compile_time_changes li').allTextContents(),
    ['openai-community/gpt2 · text-generation · 1 min 40 s → 3 min 0 s']);
  await page.screenshot({ path: join(artifacts, 'compare-how-well-laptop.png'), fullPage: true });
  await page.close();
});
