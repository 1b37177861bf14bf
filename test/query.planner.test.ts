import { describe, expect, it } from 'vitest';

import { fuseSteps } from '../ts/service/fusion.js';
import { buildPack, estimateTokens } from '../ts/service/pack.js';
import { plan, splitQuery } from '../ts/service/planner.js';
import { type QueryDeps, runQuery } from '../ts/service/query.js';

describe('planner', () => {
  it('splits on English conjunctions as whole words, longest first', () => {
    expect(splitQuery('Who leads Atlas and where is the Berlin office')).toEqual([
      'Who leads Atlas',
      'where is the Berlin office',
    ]);
    expect(splitQuery('deploy target, as well as the editor theme')).toEqual(['deploy target', 'the editor theme']);
    expect(splitQuery('check the build, and then ship it')).toEqual(['check the build', 'ship it']);
    expect(splitQuery('Priya or Marco; Lin')).toEqual(['Priya', 'Marco', 'Lin']);
    // "and" inside a word is not a conjunction.
    expect(splitQuery('Anderson handles android builds')).toEqual(['Anderson handles android builds']);
  });

  it('splits on German conjunctions as whole words', () => {
    expect(splitQuery('Wer besitzt den Auth-Service und welche Datenbank nutzt Payments?')).toEqual([
      'Wer besitzt den Auth-Service',
      'welche Datenbank nutzt Payments',
    ]);
    expect(splitQuery('der Build-Status oder die Testabdeckung, sowie der Release-Plan')).toEqual([
      'der Build-Status',
      'die Testabdeckung',
      'der Release-Plan',
    ]);
    // "und" inside a word is not a conjunction.
    expect(splitQuery('Mundart und Stundenplan')).toEqual(['Mundart', 'Stundenplan']);
    expect(splitQuery('Stundenplan der Woche')).toEqual(['Stundenplan der Woche']);
  });

  it('splits on Chinese conjunctions, never leaving a part of one character', () => {
    expect(splitQuery('普里亚负责的项目以及柏林办公室的地址')).toEqual(['普里亚负责的项目', '柏林办公室的地址']);
    expect(splitQuery('先检查构建然后发布版本')).toEqual(['先检查构建', '发布版本']);
    expect(splitQuery('张三和李四')).toEqual(['张三', '李四']);
    // 世界和平: splitting at 和 would leave 平 alone, so the query stays whole.
    expect(splitQuery('世界和平')).toEqual(['世界和平']);
    // 和平 starts with 和: that cut would leave nothing before it, and it does not veto the cut at 以及.
    expect(splitQuery('和平是什么以及战争是什么')).toEqual(['和平是什么', '战争是什么']);
    expect(splitQuery('alpha and b and gamma')).toEqual(['alpha', 'b and gamma']);
    // 和 before a question word is "with": the name stays with its question.
    expect(splitQuery('Tom Lee 和谁结婚')).toEqual(['Tom Lee 和谁结婚']);
  });

  it('never cuts inside a stored name it is given', () => {
    expect(splitQuery('Where is Johnson and Johnson located?', ['Johnson and Johnson'])).toEqual([
      'Where is Johnson and Johnson located',
    ]);
    expect(splitQuery('Are tom and jerry friends or foes', ['Tom and Jerry'])).toEqual([
      'Are tom and jerry friends',
      'foes',
    ]);
    expect(splitQuery('Are Tom and Jerry friends?')).toEqual(['Are Tom', 'Jerry friends']);
  });

  it('gives a part that refers back with a pronoun the name of the part before', () => {
    const steps = (q: string, names: string[]) => plan(q, undefined, 4, names).steps;
    expect(steps('who owns billing-svc and where is it deployed?', ['billing-svc'])).toEqual([
      'who owns billing-svc',
      'where is billing-svc deployed',
    ]);
    expect(steps('Who hired Priya Raman and what is her role?', ['Priya Raman'])).toEqual([
      'Who hired Priya Raman',
      "what is Priya Raman's role",
    ]);
    expect(steps('where is Atlas hosted; who maintains its API; and who funds it', ['Atlas'])).toEqual([
      'where is Atlas hosted',
      "who maintains Atlas's API",
      'who funds Atlas',
    ]);
    expect(steps('李雷在哪里工作以及他住在哪里', ['李雷'])).toEqual(['李雷在哪里工作', '李雷住在哪里']);
    // A part naming something of its own, the speakers ("we"), and explicit subqueries stay as written.
    expect(steps('who owns billing-svc and where is orders-svc deployed', ['billing-svc', 'orders-svc'])).toEqual([
      'who owns billing-svc',
      'where is orders-svc deployed',
    ]);
    expect(steps("what's left on Atlas and who are we waiting on?", ['Atlas'])).toEqual([
      "what's left on Atlas",
      'who are we waiting on',
    ]);
    expect(plan('x', ['who owns billing-svc', 'where is it deployed'], 4, ['billing-svc']).steps).toEqual([
      'who owns billing-svc',
      'where is it deployed',
    ]);
    // No name before it: nothing to refer to.
    expect(steps('where is it deployed and who owns billing-svc', ['billing-svc'])).toEqual([
      'where is it deployed',
      'who owns billing-svc',
    ]);
  });

  // Found by QA: "张伟的生日和住址是什么" ran 住址是什么 as a step of its own, naming no one.
  it('gives a bare part the possessor of the part before', () => {
    const steps = (q: string, names: string[]) => plan(q, undefined, 4, names).steps;
    expect(steps('张伟的生日和住址是什么', ['张伟'])).toEqual(['张伟的生日', '张伟的住址是什么']);
    expect(steps('张伟的生日以及住址', ['张伟'])).toEqual(['张伟的生日', '张伟的住址']);
    expect(steps('张伟的生日是什么，还有住址呢', ['张伟'])).toEqual(['张伟的生日是什么', '张伟的住址呢']);
    expect(steps("What are Priya Raman's birthday and address?", ['Priya Raman'])).toEqual([
      "What are Priya Raman's birthday",
      "Priya Raman's address",
    ]);
    expect(steps("priya raman's birthday and the home address", ['Priya Raman'])).toEqual([
      "priya raman's birthday",
      "Priya Raman's home address",
    ]);
    // A part with a possessor or a clause of its own, or a name not stored, stays as written; so
    // does a part after a name that is no possessor.
    expect(steps('张伟的生日和李娜的住址', ['张伟'])).toEqual(['张伟的生日', '李娜的住址']);
    expect(steps('张伟的生日和谁是他的老板', ['张伟'])).toEqual(['张伟的生日和谁是他的老板']);
    expect(steps("Priya Raman's birthday and who is the CEO", ['Priya Raman'])).toEqual([
      "Priya Raman's birthday",
      'who is the CEO',
    ]);
    expect(steps("Priya Raman's birthday and Tom", ['Priya Raman'])).toEqual(["Priya Raman's birthday", 'Tom']);
    expect(steps('张三和李四', ['张三'])).toEqual(['张三', '李四']);
  });

  it('explicit subqueries come first, in order, without duplicates; maxSteps drops the rest (L3)', () => {
    const p = plan('ignored and split', ['a question', 'another one', 'a question'], 4);
    expect(p).toMatchObject({ source: 'subqueries', steps: ['a question', 'another one'], complexity: 'L2' });
    const capped = plan('alpha and beta and gamma', undefined, 2);
    expect(capped).toMatchObject({ source: 'split', steps: ['alpha', 'beta'], dropped: ['gamma'], complexity: 'L3' });
  });

  it('complexity: L0 lookup, L1 one question, L2 several, L3 comparison/aggregation', () => {
    expect(plan('Priya Raman', undefined, 4).complexity).toBe('L0');
    expect(plan('What does Priya Raman lead at Acme?', undefined, 4).complexity).toBe('L1');
    expect(plan('Who leads Atlas and where is Acme based', undefined, 4).complexity).toBe('L2');
    expect(plan('compare the Atlas budget with last year', undefined, 4)).toMatchObject({
      complexity: 'L3',
      unsupported: ['comparison'],
    });
    expect(plan('团队里有多少人', undefined, 4).complexity).toBe('L3');
    // A Chinese question word stands where the answer goes, not first (found by an audit: L0).
    for (const q of ['李雷是谁', '李雷在哪里', '李雷做什么', '李雷在吗'])
      expect(plan(q, undefined, 4).complexity, q).toBe('L1');
    expect(plan('李雷', undefined, 4).complexity).toBe('L0');
  });

  it('is deterministic', () => {
    const q = 'editor theme and deploy target, then the release date 以及 负责人';
    expect(plan(q, undefined, 8)).toEqual(plan(q, undefined, 8));
  });
});

describe('fusion and pack', () => {
  it('RRF across steps: an item found by two steps outranks items found once', () => {
    const a = { kind: 'fact', id: '1', text: 'a' };
    const b = { kind: 'fact', id: '2', text: 'b' };
    const c = { kind: 'note', note: { id: '9' }, text: 'c' };
    const ev = fuseSteps([
      { step: 1, items: [a, b] },
      { step: 2, items: [c, b] },
    ]);
    expect(ev.map((e) => e.text)).toEqual(['b', 'a', 'c']);
    expect(ev[0]).toMatchObject({ steps: [1, 2], stepRanks: { '1': 2, '2': 2 } });
    expect(ev[0]?.score).toBeCloseTo(2 / 62, 12);
  });

  it('omits an item that does not fit whole; a smaller later one may still fit; max_items', () => {
    const items = [
      { kind: 'fact', id: '1', text: 'x'.repeat(400), score: 0.03 },
      { kind: 'fact', id: '2', text: 'short', score: 0.02 },
      { kind: 'fact', id: '3', text: 'also short', score: 0.01 },
    ];
    const p = buildPack(items, { tokenBudget: 40 });
    expect(p.items.map((i) => i.id)).toEqual(['2', '3']);
    expect(p.omitted).toEqual([
      { rank: 1, kind: 'fact', id: '1', tokens: estimateTokens(`\n[1] ${'x'.repeat(400)}`), reason: 'token_budget' },
    ]);
    expect(p.budget).toMatchObject({ estimator: 'utf8_bytes_v1', limit: 40 });
    expect(p.budget.used).toBe(estimateTokens(p.context));
    expect(p.budget.used).toBeLessThanOrEqual(40);
    expect(p.context).not.toContain('xxxx');
    const capped = buildPack(items, { maxItems: 1 });
    expect(capped.omitted.map((o) => o.reason)).toEqual(['max_items', 'max_items']);
    expect(capped.omitted_total).toBe(2);
  });

  it('names the 20 best ranked items it leaves out and counts them all', () => {
    // Found by an audit: a 300-token pack listed 89 omitted items, 6.9 KB, more than the pack.
    const items = Array.from({ length: 100 }, (_, i) => ({
      kind: 'fact',
      id: String(i + 1),
      text: `fact ${i}`,
      score: 1 - i / 100,
    }));
    const p = buildPack(items, { maxItems: 5 });
    expect(p.items).toHaveLength(5);
    expect(p.omitted.map((o) => o.rank)).toEqual(Array.from({ length: 20 }, (_, i) => i + 6));
    expect(p.omitted_total).toBe(95);
  });

  it('purpose prefers kinds: coding puts a decision note ahead of a fact of similar score', () => {
    const fact = { kind: 'fact', id: '1', text: 'Atlas uses Postgres', score: 0.02 };
    const decision = { kind: 'note', note: { id: '7', kind: 'decision' }, text: 'db: postgres 16', score: 0.018 };
    expect(buildPack([fact, decision], { purpose: 'general' }).items[0]).toBe(fact);
    expect(buildPack([fact, decision], { purpose: 'coding' }).items[0]).toBe(decision);
  });

  it('lines carry the source and date of facts and passages; an omitted note is a note', () => {
    const fact = { kind: 'fact', id: '1', text: 'Ana lives in Paris', source_date: '2020-01-01', score: 0.03 };
    const passage = { kind: 'passage', doc_id: '5', text: 'Ana moved.', date: '2023-03-01', score: 0.02 };
    const note = { kind: 'note', note: { id: '9', kind: 'user_fact' }, text: 'x'.repeat(400), score: 0.01 };
    const p = buildPack([fact, passage, note], { tokenBudget: 60 });
    expect(p.context.split('\n').slice(1)).toEqual([
      '[1] Ana lives in Paris (2020-01-01)',
      '[2] Ana moved. (2023-03-01)',
    ]);
    expect(p.omitted).toEqual([expect.objectContaining({ kind: 'note', id: '9', reason: 'token_budget' })]);
  });
});

/** Deps whose steps answer from a table, with a controllable clock. */
function fakeDeps(answers: Record<string, { delay: number; items: object[]; verdict: string }>) {
  let now = 0;
  const timers: { at: number; fire: () => void; live: boolean }[] = [];
  const advance = async (ms: number) => {
    const end = now + ms;
    for (;;) {
      // Let the query reach its next wait first (it may await the names lookup before any timer).
      await new Promise((r) => setImmediate(r));
      const due = timers.filter((t) => t.live && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      now = due.at;
      due.live = false;
      due.fire();
    }
    now = end;
  };
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      timers.push({ at: now + ms, fire: resolve, live: true });
    });
  const deps: QueryDeps = {
    async context(question) {
      const a = answers[question];
      if (a === undefined) throw new Error(`no answer for ${question}`);
      await wait(a.delay);
      return { items: a.items, grounding: { verdict: a.verdict } };
    },
    history: async () => ({ events: [] }),
    timer(ms) {
      const t = { at: now + ms, fire: () => {}, live: true };
      const fired = new Promise<void>((resolve) => {
        t.fire = resolve;
      });
      timers.push(t);
      return { fired, cancel: () => (t.live = false) };
    },
  };
  return { deps, advance };
}

describe('runQuery', () => {
  const fact = (id: string) => ({ kind: 'fact', id, text: `fact ${id}` });

  it('runs each step, fuses evidence, says sufficient when every step is grounded', async () => {
    const { deps, advance } = fakeDeps({
      alpha: { delay: 10, items: [fact('1'), fact('2')], verdict: 'grounded' },
      beta: { delay: 10, items: [fact('2')], verdict: 'grounded' },
    });
    const running = runQuery({ query: 'alpha and beta', pack: {} }, deps);
    await advance(100);
    const r = await running;
    expect(r.complexity).toBe('L2');
    expect((r.evidence as { id: string }[]).map((e) => e.id)).toEqual(['2', '1']);
    expect(r.sufficiency).toBe('sufficient');
    expect(r.fallback).toBeNull();
    expect(r.budget).toMatchObject({ estimator: 'utf8_bytes_v1' });
  });

  it('on timeout keeps the finished steps, reports the rest, and says why (deterministic degrade)', async () => {
    const { deps, advance } = fakeDeps({
      fast: { delay: 10, items: [fact('1')], verdict: 'grounded' },
      slow: { delay: 10_000, items: [fact('2')], verdict: 'grounded' },
      later: { delay: 10, items: [fact('3')], verdict: 'grounded' },
    });
    const running = runQuery({ query: 'x', subqueries: ['fast', 'slow', 'later'], timeoutMs: 500, pack: {} }, deps);
    await advance(20_000);
    const r = await running;
    expect((r.steps as { state: string }[]).map((s) => s.state)).toEqual(['done', 'timed_out', 'skipped']);
    expect((r.evidence as { id: string }[]).map((e) => e.id)).toEqual(['1']);
    // Step 2 was in flight: `timed_out` says so, and it is neither completed nor skipped.
    expect(r.fallback).toEqual({ reason: 'timeout', timeoutMs: 500, completed: [1], skipped: [3] });
    expect(r.sufficiency).toBe('partial');
  });

  it('a timeout before any step finished is partial, never insufficient: nothing was searched', async () => {
    const { deps, advance } = fakeDeps({
      slow: { delay: 10_000, items: [fact('1')], verdict: 'grounded' },
      later: { delay: 10, items: [fact('2')], verdict: 'grounded' },
    });
    const running = runQuery({ query: 'x', subqueries: ['slow', 'later'], timeoutMs: 1, pack: {} }, deps);
    await advance(20_000);
    const r = await running;
    expect((r.steps as { state: string }[]).map((s) => s.state)).toEqual(['timed_out', 'skipped']);
    expect(r.evidence).toEqual([]);
    expect(r.sufficiency).toBe('partial');
    expect(r.sufficiencyWhy).toBe('no step finished its search; step 1 timed_out; step 2 skipped');
  });

  it('a step that found nothing beside one that timed out is partial, naming both', async () => {
    const { deps, advance } = fakeDeps({
      nothing: { delay: 1, items: [], verdict: 'nothing_stored' },
      slow: { delay: 10_000, items: [fact('1')], verdict: 'grounded' },
    });
    const running = runQuery({ query: 'x', subqueries: ['nothing', 'slow'], timeoutMs: 500, pack: {} }, deps);
    await advance(20_000);
    const r = await running;
    expect(r.sufficiency).toBe('partial');
    expect(r.sufficiencyWhy).toBe('the steps that ran found no evidence; step 1 nothing_stored; step 2 timed_out');
  });

  it('asks for stored names only when the query may be cut, and never cuts them', async () => {
    const { deps, advance } = fakeDeps({
      和平饭店在哪里: { delay: 1, items: [fact('1')], verdict: 'grounded' },
      'Tom Lee住在哪里': { delay: 1, items: [fact('2')], verdict: 'grounded' },
      'Who leads Atlas': { delay: 1, items: [fact('3')], verdict: 'grounded' },
    });
    const asked: string[] = [];
    deps.names = async (query) => {
      asked.push(query);
      return ['和平饭店', 'Tom Lee'];
    };
    // The query may be cut (以及), so stored names are asked for; 和平饭店's 和 is not a cut.
    const zh = runQuery({ query: '和平饭店在哪里以及Tom Lee住在哪里', pack: {} }, deps);
    await advance(10);
    expect((await zh).plan).toMatchObject({ steps: ['和平饭店在哪里', 'Tom Lee住在哪里'] });
    const one = runQuery({ query: 'Who leads Atlas?', pack: {} }, deps);
    await advance(10);
    expect((await one).plan).toMatchObject({ steps: ['Who leads Atlas'] });
    expect(asked).toEqual(['和平饭店在哪里以及Tom Lee住在哪里']);
  });

  it('insufficient with no evidence; partial below minEvidence; L3 answers best effort', async () => {
    const { deps, advance } = fakeDeps({
      'how many people work at Acme': { delay: 1, items: [fact('1')], verdict: 'grounded' },
      nothing: { delay: 1, items: [], verdict: 'nothing_stored' },
    });
    const none = runQuery({ query: 'nothing', pack: {} }, deps);
    await advance(10);
    expect(await none).toMatchObject({ sufficiency: 'insufficient', sufficiencyWhy: 'no step found evidence' });
    const l3 = runQuery({ query: 'how many people work at Acme', minEvidence: 3, pack: {} }, deps);
    await advance(10);
    const r = await l3;
    expect(r).toMatchObject({ complexity: 'L3', sufficiency: 'partial', unsupported_complexity: ['aggregation'] });
    expect(r.fallback).toMatchObject({ reason: 'unsupported_complexity' });
  });
});
