// Browser tier: the Space `make demo` serves, opened as a newcomer would, in Debian's headless
// chromium driven by playwright-core. Run by test_demo_browser.py, which starts the demo and
// sets SPACE_URL and ARTIFACTS_DIR. What it checks is what the demo must show: every view of a
// task with data non-empty, real-model PASSes (one sharded), the exclusions with their reasons,
// a verdict that differs between the two transformers versions in the compare view, a failure
// cause of several models, and a model page with the stack and the packages on top.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { settled, useChromium } from '../serve/chromium.mjs';

const base = process.env.SPACE_URL;
const artifacts = process.env.ARTIFACTS_DIR;
assert.ok(base && artifacts, 'SPACE_URL and ARTIFACTS_DIR must be set (run through test_demo_browser.py)');
mkdirSync(artifacts, { recursive: true });
const openPage = useChromium(base);

const rowIds = (page) => page.locator('table.models tbody a.model-link').allTextContents();
const rowOf = (page, id) =>
  page.locator('table.models tbody tr', { has: page.getByRole('link', { name: id, exact: true }) });
const statusOf = (page, id) => rowOf(page, id).locator('.badge').first().textContent();

async function clickTab(page, name, view) {
  await page.getByRole('tab', { name }).click();
  await page.waitForURL(new RegExp(`view=${view}`));
  await settled(page);
}

test('the demo opens on Selected of text generation, with real-model PASSes and reasoned exclusions', async () => {
  const page = await openPage('/');
  assert.equal(await page.getByRole('tab', { selected: true }).textContent(), 'Selected');
  assert.equal(await page.locator('#task').inputValue(), 'text-generation');
  const ids = await rowIds(page);
  assert.equal(ids[0], 'HuggingFaceTB/SmolLM2-135M-Instruct');  // the curator's order
  assert.equal(ids.length, 7);
  assert.equal(await statusOf(page, 'HuggingFaceTB/SmolLM2-135M-Instruct'), 'PASS');
  assert.match(await rowOf(page, 'HuggingFaceTB/SmolLM2-135M-Instruct').textContent(), /3/);
  assert.equal(await statusOf(page, 'canrun-fixtures/big-llama'), 'EXCLUDED');
  assert.match(await rowOf(page, 'canrun-fixtures/big-llama').textContent(), /too large/i);
  // The newest stack by default; both transformers versions to choose from.
  assert.equal(await page.locator('#library_version').inputValue(), '5.18.0');
  assert.deepEqual((await page.locator('#library_version option').allTextContents()).sort(), ['4.57.6', '5.18.0']);
  // Every task of the zoo has data.
  const tasks = await page.locator('#task option').allTextContents();
  for (const task of ['text-generation', 'image-text-to-text', 'sentence-similarity', 'feature-extraction', 'text-classification',
    'fill-mask', 'token-classification', 'image-classification', 'zero-shot-image-classification', 'translation',
    'text2text-generation', 'text-ranking', 'automatic-speech-recognition', 'text-to-image']) {
    assert.ok(tasks.includes(task), `${task} in ${tasks}`);
  }
  await page.screenshot({ path: join(artifacts, 'demo-laptop.png') });
  await page.close();
  const phone = await openPage('/', { width: 390, height: 844 });
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `page scrolls sideways by ${overflow}px`);
  await phone.screenshot({ path: join(artifacts, 'demo-phone.png'), fullPage: true });
  await phone.close();
});

test('Trending, Downloads and Tested are non-empty; every exclusion kind shows its reason', async () => {
  const page = await openPage('/?task=text-generation');
  await clickTab(page, 'Trending', 'trending');
  assert.equal((await rowIds(page))[0], 'canrun-fixtures/tiny-nanochat');  // trending score 88
  await clickTab(page, 'Downloads', 'downloads');
  const downloads = await rowIds(page);
  assert.equal(downloads[0], 'HuggingFaceTB/SmolLM2-135M-Instruct');
  // The zoo's 15 text-generation models, then 7 it does not hold: not tested, with a predicted plan.
  assert.equal(downloads.length, 22, downloads);
  assert.equal(await statusOf(page, 'Qwen/Qwen3-0.6B'), 'Not tested');
  assert.match(await rowOf(page, 'Qwen/Qwen3-0.6B').locator('.predicted').first().textContent(), /^predicted: /);
  for (const [id, reason] of [['canrun-fixtures/no-weights', /no safetensors/], ['canrun-fixtures/remote-code', /remote code/i],
    ['canrun-fixtures/big-llama', /too large/i], ['canrun-fixtures/big-gpt2', /no parallel plan/i],
    ['canrun-fixtures/tiny-fp8', /quantized/i], ['canrun-fixtures/tiny-llama-4l', /low priority/i]]) {
    assert.equal(await statusOf(page, id), 'EXCLUDED', id);
    assert.match(await rowOf(page, id).textContent(), reason, id);
  }
  await clickTab(page, 'Tested', 'tested');
  assert.ok((await rowIds(page)).length >= 15);
  await page.locator('#task').selectOption('sentence-similarity');
  await page.waitForURL(/task=sentence-similarity/);
  await settled(page);
  assert.equal(await statusOf(page, 'sentence-transformers/all-MiniLM-L6-v2'), 'PASS');
  await page.close();
});

test('compare: NanoChat and Jais2 load on transformers 5.18.0, not on 4.57.6', async () => {
  const page = await openPage('/?task=text-generation');
  await page.locator('#compare-link').click();
  await page.waitForURL(/\/compare\?/);
  await settled(page);
  assert.match(await page.locator('#compare-b option:checked').textContent(), /transformers 5\.18\.0/);
  assert.match(await page.locator('#compare-a option:checked').textContent(), /transformers 4\.57\.6/);
  const fixes = await page.locator('#compare-fixes li').allTextContents();
  for (const id of ['canrun-fixtures/tiny-nanochat', 'canrun-fixtures/tiny-jais2']) {
    assert.ok(fixes.some((text) => text.includes(id) && /FAIL_LOAD → PASS/.test(text)), fixes.join('\n'));
  }
  await page.screenshot({ path: join(artifacts, 'demo-compare.png'), fullPage: true });
  await page.close();
});

test('failure causes on 4.57.6: one cause groups several models', async () => {
  const page = await openPage('/?task=text-generation&library_version=4.57.6');
  await page.locator('#causes-link').click();
  await page.waitForURL(/\/causes\?/);
  await settled(page);
  const counts = await page.locator('.cause-models').evaluateAll((lists) => lists.map((list) => list.querySelectorAll('a').length));
  assert.ok(Math.max(...counts) >= 2, `models per cause: ${counts}`);
  // The architectures 4.57.6 does not know, named by their model types.
  assert.match(await page.locator('.cause-types').first().textContent(), /Model types: .*nanochat/);
  await page.screenshot({ path: join(artifacts, 'demo-causes.png'), fullPage: true });
  await page.close();
});

test("model pages: the sharded PASS, the stack apart from the packages on top, both images", async () => {
  let page = await openPage('/model/HuggingFaceTB/SmolLM2-135M-Instruct?task=text-generation');
  assert.match(await page.locator('.facts').textContent(), /Cores3Parallelismtp/);
  assert.match(await page.locator('#verified').textContent(), /judge/);
  // How its run was boxed (as root, all of canrun's box; elsewhere at least no secrets).
  assert.match(await page.locator('#isolation').textContent(),
    process.getuid() === 0 ? /^boxed: user namespace, no network but loopback, read-only but its folders, PID namespace, process limit; no secrets passed to it$/
      : /no secrets passed to it$/);
  // How to run it: the stack (the environment), then apart from it what to add on top: nothing.
  assert.match(await page.locator('#stack-summary').textContent(), /torch 2\.13\.0.*transformers 5\.18\.0/);
  assert.equal(await page.locator('#packages').count(), 0);
  assert.equal(await page.locator('#no-packages').textContent(), 'Nothing beyond the stack.');
  await page.screenshot({ path: join(artifacts, 'demo-model.png'), fullPage: true });
  await page.close();
  page = await openPage('/model/canrun-fixtures/tiny-tiktoken?task=text-generation');
  assert.match(await page.locator('#packages').textContent(), /^pip install tiktoken==\d/);
  await page.close();
  // feature-extraction: its input, the fixed sentences in run.py, and its output, the vectors'
  // summary with the pooling the repo named.
  for (const [viewport, name] of [[undefined, 'demo-features-laptop'], [{ width: 390, height: 844 }, 'demo-features-phone']]) {
    page = await openPage('/model/canrun-fixtures/tiny-bge-features?task=feature-extraction', viewport);
    assert.equal(await page.locator('.facts .badge').first().textContent(), 'PASS');
    assert.match(await page.locator('#output-text').textContent(),
      /^10 sentences, 32-dimensional embeddings \(cls pooling, normalized; from 1_Pooling\/config\.json and its Normalize module\); lowest cosine similarity with the CPU reference 1\.000000/);
    assert.match(await page.locator('#run-py').textContent(), /SENTENCES = \[\n    PROMPT,\n    "How do plants make their food\?"/);
    await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
    await page.close();
  }
  // image-classification: the image run.py drew and classified, and the top 5 labels of the run
  // and of the CPU reference.
  // zero-shot-image-classification: the same, the labels ranked (tiny SigLIP's first).
  for (const [model, task, best, name] of [
    ['tiny-vit-classifier', 'image-classification', 'sun', 'demo-classifier'],
    ['tiny-siglip', 'zero-shot-image-classification', 'a landscape with a red sun over green hills', 'demo-zero-shot']]) {
    for (const [viewport, suffix] of [[undefined, 'laptop'], [{ width: 390, height: 844 }, 'phone']]) {
      page = await openPage(`/model/canrun-fixtures/${model}?task=${task}`, viewport);
      await page.waitForFunction(() => document.querySelector('#image-input-image')?.complete);
      assert.equal(await page.locator('#image-input-image').evaluate((img) => img.naturalWidth), 96);
      const output = await page.locator('#output-text').textContent();
      assert.ok(output.startsWith(`this run: ${best} `), output);
      assert.ok(output.includes(`\nCPU reference: ${best} `), output);
      await page.screenshot({ path: join(artifacts, `${name}-${suffix}.png`), fullPage: true });
      await page.close();
    }
  }
  // translation: the source sentence with the T5 prefix the recipe added, then the run's and
  // the CPU reference's translations. text-ranking: the queries and documents, then each
  // query's order of the documents, the run's and the reference's.
  for (const [model, task, input, name] of [
    ['tiny-t5-translator', 'translation', /^translate English to French: The house is wonderful and the garden is full of flowers\. \(a T5 task prefix, from the config's task_specific_params\)$/, 'demo-translation'],
    ['tiny-bert-reranker', 'text-ranking', /^q1: Where is the Eiffel Tower\?\nq2: .+\nq3: .+\nd1: The Eiffel Tower stands in Paris.+\nd7: .+$/s, 'demo-ranking']]) {
    for (const [viewport, suffix] of [[undefined, 'laptop'], [{ width: 390, height: 844 }, 'phone']]) {
      page = await openPage(`/model/canrun-fixtures/${model}?task=${task}`, viewport);
      assert.equal(await page.locator('.facts .badge').first().textContent(), 'PASS');
      assert.match(await page.locator('#input-text').textContent(), input);
      const [ran, reference] = (await page.locator('#output-text').textContent()).split('\n');
      assert.match(ran, /^this run: ./);
      assert.equal(reference, `CPU reference: ${ran.slice('this run: '.length)}`);
      if (task === 'text-ranking') assert.match(ran, /^this run: q1: (d\d > ){6}d\d; q2: /);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${name}-${suffix} scrolls sideways by ${overflow}px`);
      await page.screenshot({ path: join(artifacts, `${name}-${suffix}.png`), fullPage: true });
      await page.close();
    }
  }
  // automatic-speech-recognition: a player of the clip run.py made, what it gave the model, and
  // the transcripts of the run and of the CPU reference.
  for (const [viewport, suffix] of [[undefined, 'laptop'], [{ width: 390, height: 844 }, 'phone']]) {
    page = await openPage('/model/canrun-fixtures/tiny-whisper?task=automatic-speech-recognition', viewport);
    await page.waitForFunction(() => document.querySelector('#input-audio')?.readyState >= 1);
    assert.equal(Math.round(await page.locator('#input-audio').evaluate((audio) => audio.duration * 10)), 24);
    assert.equal(await page.locator('#input-text').textContent(), '2.4 s of audio at 16000 Hz (input.wav); language en, task transcribe');
    const [ran, reference] = (await page.locator('#output-text').textContent()).split('\n');
    assert.equal(reference, `CPU reference: ${ran.slice('this run: '.length)}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `demo-speech-${suffix} scrolls sideways by ${overflow}px`);
    await page.screenshot({ path: join(artifacts, `demo-speech-${suffix}.png`), fullPage: true });
    await page.close();
  }
  page = await openPage('/model/canrun-fixtures/tiny-sd?task=text-to-image');
  for (const id of ['#image-image', '#image-reference-image']) {
    await page.waitForFunction((selector) => document.querySelector(selector)?.complete, id);
    assert.equal(await page.locator(id).evaluate((img) => img.naturalWidth), 32, id);
  }
  await page.close();
});
