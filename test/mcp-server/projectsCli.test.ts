/**
 * Projects, scopes and reserve on the command line: the CLI (in process,
 * runCliHere; a plan on stdin through the bundle) run inside a temp git repository with an `origin`
 * remote, another without, and outside any, against one real hub. create/list/claim take the folder's project unless --project / --no-project say
 * otherwise, --scope is a comma list that keeps brace globs whole, a plan file carries project and
 * scope per card, show and list print them, `baton reserve` prints granted and refused paths, and bad
 * scopes exit 1 with the hub's sentence and change nothing.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { gitRepo, plainFolder } from '../helpers/gitRepos';
import { type CliResult, cleanupDataDir, ensureBuilt, runBaton, runCliHere, tempDataDir } from '../helpers/mcp';

const web = 'github.com/acme/web';
let dataDir: string;
let parent: string;
let webRepo: string;
let apiRepo: string;
let nowhere: string;

interface CardView {
	id: string;
	title: string;
	project?: string | null;
	scope?: string[];
	reserved?: string[];
}

/** The CLI in process in `cwd` (runCliHere), through the bundle when it reads stdin (`input`). */
function baton(args: string[], cwd: string, options: { agent?: string; input?: string } = {}): Promise<CliResult> {
	const run = { dataDir, cwd, env: { BATON_AGENT: options.agent ?? 'cli:alice' } };
	return options.input === undefined ? runCliHere(args, run) : runBaton(args, { ...run, input: options.input });
}

async function json<T>(args: string[], cwd: string, options: { agent?: string; input?: string } = {}): Promise<T> {
	const r = await baton([...args, '--json'], cwd, options);
	assert.equal(r.code, 0, `baton ${args.join(' ')} exited ${r.code}: ${r.stdout} ${r.stderr}`);
	return JSON.parse(r.stdout) as T;
}

async function created(args: string[], cwd: string): Promise<CardView> {
	const r = await json<{ cards: CardView[] }>(['create', ...args], cwd);
	const [card] = r.cards;
	assert.ok(card !== undefined);
	return card;
}

before(() => {
	ensureBuilt();
	dataDir = tempDataDir();
	parent = mkdtempSync('/tmp/btp-');
	webRepo = gitRepo(parent, 'web', 'https://github.com/acme/web.git');
	apiRepo = gitRepo(parent, 'api-svc');
	nowhere = plainFolder(parent, 'plain');
});

after(async () => {
	await cleanupDataDir(dataDir);
	rmSync(parent, { recursive: true, force: true });
});

describe('baton CLI: projects', () => {
	it('create gives cards the folder project, --project another, --no-project none', async () => {
		assert.equal((await created(['Inferred', '--phase', 'cli-create'], webRepo)).project, web);
		assert.equal(
			(await created(['Named', '--phase', 'cli-create', '--project', 'api-svc'], webRepo)).project,
			'api-svc',
		);
		assert.equal((await created(['Free', '--phase', 'cli-create', '--no-project'], webRepo)).project ?? null, null);
		assert.equal((await created(['Outside', '--phase', 'cli-create'], nowhere)).project ?? null, null);
		const both = await baton(['create', 'Both', '--project', 'x', '--no-project'], webRepo);
		assert.equal(both.code, 2);
		assert.match(both.stderr, /--project or --no-project, not both/);
		const bad = await baton(['create', 'Bad', '--project', 'a*b'], webRepo);
		assert.equal(bad.code, 1, 'refused by the protocol schema before a hub is asked');
		assert.match(bad.stderr, /--project/);
	});

	it('list shows the folder project and cards with none; --project "*" every project', async () => {
		await created(['Web card', '--phase', 'cli-list'], webRepo);
		await created(['API card', '--phase', 'cli-list'], apiRepo);
		await created(['Free card', '--phase', 'cli-list', '--no-project'], webRepo);
		const inWeb = await json<{ cards: CardView[] }>(['list', '--phase', 'cli-list'], webRepo);
		assert.deepEqual(inWeb.cards.map(c => c.title).sort(), ['Free card', 'Web card']);
		const all = await json<{ cards: CardView[] }>(['list', '--phase', 'cli-list', '--project', '*'], webRepo);
		assert.equal(all.cards.length, 3);
		const table = await baton(['list', '--phase', 'cli-list', '--project', '*'], webRepo);
		assert.match(table.stdout, /PROJECT/);
		assert.match(table.stdout, /api-svc/);
		assert.match(table.stdout, /github\.com\/acme\/web/);
	});

	it('claim takes the folder project and cards with none, never another project', async () => {
		await created(['API first', '--phase', 'cli-claim', '--priority', '9'], apiRepo);
		const free = await created(['Free', '--phase', 'cli-claim', '--priority', '5', '--no-project'], webRepo);
		const webCard = await created(['Web', '--phase', 'cli-claim', '--priority', '1'], webRepo);
		const claim = (cwd: string, ...extra: string[]) =>
			json<{ card: CardView | null; reason?: string }>(['claim', '--phase', 'cli-claim', ...extra], cwd, {
				agent: 'cli-claimer',
			});
		assert.equal((await claim(webRepo)).card?.id, free.id);
		assert.equal((await claim(webRepo)).card?.id, webCard.id);
		assert.equal((await claim(webRepo)).card, null);
		assert.equal((await claim(nowhere)).card, null, 'outside a repository: only cards without a project');
		assert.equal((await claim(webRepo, '--project', '*')).card?.title, 'API first');
	});

	it('edit moves a card to another project or to none', async () => {
		const card = await created(['Movable', '--phase', 'cli-edit'], webRepo);
		const moved = await json<{ card: CardView }>(['edit', card.id, '--project', 'api-svc'], webRepo);
		assert.equal(moved.card.project, 'api-svc');
		const freed = await json<{ card: CardView }>(['edit', card.id, '--no-project'], webRepo);
		assert.equal(freed.card.project ?? null, null);
	});
});

describe('baton CLI: scopes and reserve', () => {
	it('--scope is a comma list that keeps braces whole; show prints project and scope', async () => {
		const card = await created(
			['Scoped', '--phase', 'cli-scope', '--scope', 'src/{a,b}/**,package.json', '--scope', 'lock:db'],
			webRepo,
		);
		assert.deepEqual(card.scope, ['src/{a,b}/**', 'package.json', 'lock:db']);
		const shown = await baton(['show', card.id], webRepo);
		assert.equal(shown.code, 0);
		assert.match(shown.stdout, /^project +github\.com\/acme\/web$/m);
		assert.match(shown.stdout, /^scope +src\/\{a,b\}\/\*\*, package\.json, lock:db$/m);
		const edited = await json<{ card: CardView }>(['edit', card.id, '--scope', 'src/c/**'], webRepo);
		assert.deepEqual(edited.card.scope, ['src/c/**']);
	});

	it('a plan file carries project and scope per card; --project is the default of the rest', async () => {
		const plan = JSON.stringify({
			cards: [
				{ id: 'PLAN1', title: 'Schema', phase: 'cli-plan', scope: ['src/db/**', 'lock:db-migrations'] },
				{ id: 'PLAN2', title: 'API', phase: 'cli-plan', project: 'api-svc', dependsOn: ['PLAN1'] },
			],
		});
		const r = await json<{ cards: CardView[] }>(
			['create', '--file', '-', '--project', 'github.com/acme/mono'],
			webRepo,
			{
				input: plan,
			},
		);
		assert.deepEqual(
			r.cards.map(c => [c.id, c.project, c.scope]),
			[
				['PLAN1', 'github.com/acme/mono', ['src/db/**', 'lock:db-migrations']],
				['PLAN2', 'api-svc', []],
			],
		);
	});

	it('reserve prints what it granted and who holds what it refused', async () => {
		const auth = await created(['Auth', '--phase', 'cli-reserve', '--scope', 'src/auth/**'], webRepo);
		const db = await created(['DB', '--phase', 'cli-reserve', '--scope', 'src/db/**'], webRepo);
		await json(['claim', auth.id], webRepo, { agent: 'cli-one' });
		await json(['claim', db.id], webRepo, { agent: 'cli-two' });
		const r = await baton(['reserve', auth.id, 'docs/auth.md', 'src/db/schema.ts'], webRepo, { agent: 'cli-one' });
		assert.equal(r.code, 0, r.stderr);
		assert.match(r.stdout, new RegExp(`^Reserved for ${auth.id}: docs/auth\\.md$`, 'm'));
		assert.match(r.stdout, new RegExp(`^Refused src/db/schema\\.ts: ${db.id} \\(cli-two\\) holds src/db/\\*\\*$`, 'm'));
		const again = await json<{ granted: string[]; refused: { holder: string }[] }>(
			['reserve', auth.id, 'lock:release', 'src/db/x.ts'],
			webRepo,
			{ agent: 'cli-one' },
		);
		assert.deepEqual(again.granted, ['lock:release']);
		assert.equal(again.refused[0]?.holder, 'cli-two');
		const shown = await baton(['show', auth.id], webRepo);
		assert.match(shown.stdout, /^reserved +docs\/auth\.md, lock:release$/m);
	});

	const bad: [string, string, RegExp][] = [
		['an absolute path', '/repo/src/x.ts', /Scope entry "\/repo\/src\/x\.ts" is an absolute path/],
		['a path out of the root', '../secrets', /Scope entry "\.\.\/secrets" leaves the project root/],
		['a lock name with spaces', 'lock:two words', /Scope entry "lock:two words" is not a lock name/],
		['an invalid glob', 'src/{a,{b,c}}', /Scope entry "src\/\{a,\{b,c\}\}" nests braces/],
		['an unclosed character class', 'src/[ab.ts', /Scope entry "src\/\[ab\.ts" is not a valid glob/],
	];
	for (const [what, entry, message] of bad) {
		it(`refuses ${what} in create, edit and reserve: exit 1, the hub's sentence, nothing changed`, async () => {
			const phase = `cli-bad-${what.length}`;
			const create = await baton(['create', 'Bad', '--phase', phase, '--scope', `src/ok/**,${entry}`], webRepo);
			assert.equal(create.code, 1);
			assert.match(create.stderr, message);
			assert.deepEqual((await json<{ cards: unknown[] }>(['list', '--phase', phase], webRepo)).cards, []);

			const card = await created(['Good', '--phase', phase, '--scope', 'src/ok/**'], webRepo);
			const edit = await baton(['edit', card.id, '--scope', entry, '--json'], webRepo);
			assert.equal(edit.code, 1);
			assert.match((JSON.parse(edit.stdout) as { error: { message: string } }).error.message, message);
			await json(['claim', card.id], webRepo, { agent: 'cli-bad' });
			const reserve = await baton(['reserve', card.id, 'docs/x.md', entry], webRepo, { agent: 'cli-bad' });
			assert.equal(reserve.code, 1);
			assert.match(reserve.stderr, message);
			const after = await json<{ card: CardView }>(['show', card.id], webRepo);
			assert.deepEqual(after.card.scope, ['src/ok/**']);
			assert.deepEqual(after.card.reserved, []);
			// Free src/ok/** for the next case (a held scope keeps overlapping claims away).
			await json(['release', card.id], webRepo, { agent: 'cli-bad' });
		});
	}

	it('refuses more than 64 scope entries before a hub is asked', async () => {
		const many = Array.from({ length: 65 }, (_, i) => `src/f${i}.ts`);
		const create = await baton(['create', 'Wide', '--scope', many.join(',')], nowhere);
		assert.equal(create.code, 1);
		assert.match(create.stderr, /--scope: .*at most 64 entries/);
		const reserve = await baton(['reserve', 'ABCDE', ...many], nowhere);
		assert.equal(reserve.code, 1);
		assert.match(reserve.stderr, /at most 64 entries/);
	});
});
