/**
 * Projects, scopes and reserve through `baton mcp`: real `baton mcp` processes
 * started inside real temp git repositories (one with an `origin` remote, one without) and outside
 * any, driven by the MCP SDK client over stdio against one real hub. The agent's project comes from
 * its working directory unless --project / BATON_PROJECT say otherwise; claims never cross projects;
 * reserve grants what is free and names the holder of the rest; bad scopes are refused by the hub's
 * words, with nothing changed. Each test works in its own phase so the tests do not see each other.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { gitRepo, plainFolder } from '../helpers/gitRepos';
import { type Agent, cleanupDataDir, ensureBuilt, runBaton, startAgent, tempDataDir, textOf } from '../helpers/mcp';

const web = 'github.com/acme/web';
let dataDir: string;
let parent: string;
let webRepo: string;
let apiRepo: string;
let nowhere: string;
const agents: Agent[] = [];

interface CardView {
	id: string;
	status: string;
	phase?: string;
	project?: string;
	scope?: string[];
	reserved?: string[];
	claimOwner?: string;
}
interface Claimed {
	card: CardView | null;
	lease: { epoch: number } | null;
	reason?: string;
}

async function agent(id: string, cwd: string, options: { args?: string[]; env?: Record<string, string> } = {}) {
	const a = await startAgent(dataDir, { cwd, args: options.args ?? [], env: { BATON_AGENT: id, ...options.env } });
	agents.push(a);
	return a;
}

/** Cards straight from the CLI, as a human adds them (run outside any repository: no default project). */
async function cliCreate(phase: string, cards: Record<string, unknown>[]): Promise<CardView[]> {
	const r = await runBaton(['create', '--file', '-', '--json'], {
		dataDir,
		cwd: nowhere,
		input: JSON.stringify(cards.map(c => ({ phase, ...c }))),
	});
	assert.equal(r.code, 0, r.stderr);
	return (JSON.parse(r.stdout) as { cards: CardView[] }).cards;
}

async function show(a: Agent, cardId: string): Promise<CardView> {
	return (await a.json<{ card: CardView }>('show', { cardId })).card;
}

before(() => {
	ensureBuilt();
	dataDir = tempDataDir();
	parent = mkdtempSync('/tmp/btp-');
	webRepo = gitRepo(parent, 'web', 'git@github.com:Acme/Web.git');
	apiRepo = gitRepo(parent, 'api-svc');
	nowhere = plainFolder(parent, 'plain');
});

after(async () => {
	await Promise.all(agents.map(a => a.close().catch(() => undefined)));
	await cleanupDataDir(dataDir);
	rmSync(parent, { recursive: true, force: true });
});

describe('baton mcp: the agent project', () => {
	it('infers the project from the git repository it runs in and gives it to the cards it creates', async () => {
		const inWeb = await agent('web-creator', webRepo);
		const created = await inWeb.json<{ cards: CardView[] }>('create', {
			cards: [
				{ title: 'Login form', phase: 'infer', scope: ['src/login/**'] },
				{ title: 'Shared card', phase: 'infer', project: 'github.com/acme/other' },
			],
		});
		const [login, shared] = created.cards;
		assert.ok(login !== undefined && shared !== undefined);
		assert.equal(login.project, web, 'the origin remote, normalised');
		assert.deepEqual(login.scope, ['src/login/**']);
		assert.equal(shared.project, 'github.com/acme/other', 'an explicit project wins');
		const shown = await show(inWeb, login.id);
		assert.equal(shown.project, web);
		assert.deepEqual(shown.scope, ['src/login/**']);
		assert.equal(shown.reserved, undefined, 'empty reserved is left out of the compact card');

		const inApi = await agent('api-creator', apiRepo);
		const api = await inApi.json<{ cards: CardView[] }>('create', { title: 'Rate limit', phase: 'infer' });
		assert.equal(api.cards[0]?.project, 'api-svc', 'a repository without a remote: its folder name');
		assert.match(inApi.stderr(), /project api-svc/);
	});

	it('takes --project over BATON_PROJECT over the repository, and "*" for no project of its own', async () => {
		const flag = await agent('flag-agent', webRepo, {
			args: ['--project', 'github.com/acme/flag'],
			env: { BATON_PROJECT: 'github.com/acme/env' },
		});
		const env = await agent('env-agent', webRepo, { env: { BATON_PROJECT: 'github.com/acme/env' } });
		const any = await agent('any-agent', webRepo, { args: ['--project', '*'] });
		const outside = await agent('outside-agent', nowhere);
		const projectOf = async (a: Agent): Promise<string | undefined> =>
			(await a.json<{ cards: CardView[] }>('create', { title: 'Which project', phase: 'override' })).cards[0]?.project;
		assert.equal(await projectOf(flag), 'github.com/acme/flag');
		assert.equal(await projectOf(env), 'github.com/acme/env');
		assert.equal(await projectOf(any), undefined);
		assert.equal(await projectOf(outside), undefined);
	});

	it('refuses a --project that is no project id at start (exit 2), naming it', async () => {
		const r = await runBaton(['mcp', '--project', 'a*b'], { dataDir, cwd: webRepo });
		assert.equal(r.code, 2);
		assert.match(r.stderr, /--project "a\*b" is not a project id/);
	});

	it("hands an agent its project's cards and cards with none, never another project's", async () => {
		const [apiCard, noneCard, webCard] = await cliCreate('claims', [
			{ title: 'API work', project: 'api-svc', priority: 30 },
			{ title: 'Anyone', priority: 20 },
			{ title: 'Web work', project: web, priority: 10 },
		]);
		const a = await agent('web-claimer', webRepo);
		const first = await a.json<Claimed>('claim', { phase: 'claims' });
		assert.equal(first.card?.id, noneCard?.id, 'the higher-priority api card is skipped');
		const second = await a.json<Claimed>('complete', {
			cardId: noneCard?.id,
			result: 'ok',
			next: true,
			phase: 'claims',
		});
		assert.equal(
			(second as unknown as { next: Claimed }).next.card?.id,
			webCard?.id,
			"complete's next stays in the project",
		);
		await a.json('complete', { cardId: webCard?.id, result: 'ok' });
		const none = await a.json<Claimed>('claim', { phase: 'claims' });
		assert.equal(none.card, null);
		const byId = await a.call('claim', { cardId: apiCard?.id });
		assert.equal(byId.isError, true, 'nor by id');
		assert.match(textOf(byId), /api-svc|project/);

		const outside = await agent('plain-claimer', nowhere);
		assert.equal(
			(await outside.json<Claimed>('claim', { phase: 'claims' })).card,
			null,
			'no project: only cards with none',
		);
		const apiAgent = await agent('api-claimer', apiRepo);
		assert.equal((await apiAgent.json<Claimed>('claim', { phase: 'claims' })).card?.id, apiCard?.id);
	});

	it('lists its own project and cards with none by default, every project with project "*"', async () => {
		await cliCreate('listing', [
			{ title: 'API only', project: 'api-svc' },
			{ title: 'Web only', project: web },
			{ title: 'None' },
		]);
		const a = await agent('web-lister', webRepo);
		const mine = await a.json<{ cards: CardView[] }>('list', { phase: 'listing' });
		assert.deepEqual(mine.cards.map(c => c.project ?? null).sort(), [web, null].sort());
		const all = await a.json<{ cards: CardView[] }>('list', { phase: 'listing', project: '*' });
		assert.equal(all.cards.length, 3);
	});
});

describe('baton mcp: scopes and reserve', () => {
	it('grants free paths, refuses held ones naming card and holder, and frees everything at the end', async () => {
		const [auth, db, waits] = await cliCreate('reserve', [
			{ title: 'Auth', project: web, scope: ['src/auth/**'], priority: 30 },
			{ title: 'DB', project: web, scope: ['src/db/**', 'lock:db-migrations'], priority: 20 },
			{ title: 'Auth tests', project: web, scope: ['src/auth/*.test.ts'], priority: 10 },
		]);
		const one = await agent('reserver-1', webRepo);
		const two = await agent('reserver-2', webRepo);
		assert.equal((await one.json<Claimed>('claim', { phase: 'reserve' })).card?.id, auth?.id);
		assert.equal((await two.json<Claimed>('claim', { phase: 'reserve' })).card?.id, db?.id);
		const three = await agent('reserver-3', webRepo);
		const kept = await three.json<Claimed>('claim', { phase: 'reserve' });
		assert.equal(kept.card, null, `${waits?.id} overlaps the auth claim`);
		assert.match(kept.reason ?? '', new RegExp(`1 ready card waits on files held by ${auth?.id} \\(reserver-1\\)`));

		const r = await one.json<{ granted: string[]; refused: unknown[] }>('reserve', {
			cardId: auth?.id,
			paths: ['docs/auth.md', 'src/db/schema.ts', 'lock:db-migrations'],
		});
		assert.deepEqual(r.granted, ['docs/auth.md']);
		assert.deepEqual(r.refused, [
			{ path: 'src/db/schema.ts', theirs: 'src/db/**', cardId: db?.id, holder: 'reserver-2' },
			{ path: 'lock:db-migrations', theirs: 'lock:db-migrations', cardId: db?.id, holder: 'reserver-2' },
		]);
		assert.deepEqual((await show(one, auth?.id ?? '')).reserved, ['docs/auth.md']);
		await one.json('complete', { cardId: auth?.id, result: 'done' });
		assert.equal((await show(one, auth?.id ?? '')).reserved, undefined, 'the end of the claim empties reserved');
		assert.equal((await three.json<Claimed>('claim', { phase: 'reserve' })).card?.id, waits?.id);
	});

	const bad: [string, string, RegExp][] = [
		['an absolute path', '/repo/src/x.ts', /Scope entry "\/repo\/src\/x\.ts" is an absolute path/],
		['a path out of the root', 'src/../../etc', /Scope entry "src\/\.\.\/\.\.\/etc" leaves the project root/],
		['a lock name with spaces', 'lock:two words', /Scope entry "lock:two words" is not a lock name/],
		['an invalid glob', 'src/{a,{b,c}}/*', /Scope entry "src\/\{a,\{b,c\}\}\/\*" nests braces/],
		['an unclosed character class', 'src/[ab.ts', /Scope entry "src\/\[ab\.ts" is not a valid glob/],
	];
	for (const [what, entry, message] of bad) {
		it(`refuses ${what} in create and reserve with the hub's words, changing nothing`, async () => {
			const a = await agent(`bad-${what.replace(/\W+/g, '-')}`, webRepo);
			const phase = `bad-${what.length}`;
			const created = await a.call('create', { title: 'Bad scope', phase, scope: ['src/ok/**', entry] });
			assert.equal(created.isError, true);
			assert.match(textOf(created), /^invalid_input: /);
			assert.match(textOf(created), message);
			assert.deepEqual((await a.json<{ cards: unknown[] }>('list', { phase })).cards, [], 'nothing created');

			const [card] = await a
				.json<{ cards: CardView[] }>('create', { title: 'Good', phase, scope: ['src/ok/**'] })
				.then(r => r.cards);
			await a.json('claim', { cardId: card?.id });
			const reserved = await a.call('reserve', { cardId: card?.id, paths: ['docs/fine.md', entry] });
			assert.equal(reserved.isError, true);
			assert.match(textOf(reserved), message);
			assert.equal((await show(a, card?.id ?? '')).reserved, undefined, 'nothing reserved');
			await a.json('release', { cardId: card?.id });
		});
	}

	it('refuses more than 64 entries before the hub', async () => {
		const a = await agent('too-many', webRepo);
		const paths = Array.from({ length: 65 }, (_, i) => `src/f${i}.ts`);
		const r = await a.call('create', { title: 'Too wide', phase: 'wide', scope: paths });
		assert.equal(r.isError, true);
		assert.match(textOf(r), /scope: a scope lists at most 64 entries/);
		assert.deepEqual((await a.json<{ cards: unknown[] }>('list', { phase: 'wide' })).cards, []);
	});
});
