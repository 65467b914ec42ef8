/**
 * `card/diff` over a real hub connection: a real `baton hub` on a PostgreSQL schema, cards
 * whose workspaces are real worktrees and branches of a test repository (recorded through a second
 * Backlog on the schema, test/helpers/workspaceCards.ts), and a client asking over the hub's socket.
 * The answer lists the files with their change and counts and the patch of the branch since its base
 * (HTML in files stays text: it is the client's to escape); `paths` narrows it; a branch whose patch
 * is over the cap arrives cut, still parseable, with its size; export and import keep the workspace.
 * A card without a workspace, one whose workspace is on another host, one already landed and an
 * unknown card get errors that say so.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { parsePatch } from 'diff';
import type { Backlog } from '../../core/backlog';
import { diffLimits } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { dropSchema, uniqueSchema } from '../helpers/backlog';
import { type HubProcess, client, hubEnv, removeDataDir, startHub, tempDataDir } from '../helpers/hub';
import { testDatabaseUrl } from '../helpers/backlog';
import { refused } from '../helpers/refused';
import { giveWorkspace, schemaBacklog } from '../helpers/workspaceCards';
import { type TestRepo, makeRepo } from '../helpers/workspaceRepo';

describe('card/diff through the hub', () => {
	const schema = uniqueSchema();
	const dataDir = tempDataDir();
	let hub: HubProcess;
	let backlog: Backlog;
	let reviewer: RpcClient;
	let repo: TestRepo;

	before(async () => {
		hub = await startHub({ dataDir, env: hubEnv({ DATABASE_URL: testDatabaseUrl, BATON_PG_SCHEMA: schema }) });
		reviewer = await client(dataDir, { agent: { id: 'reviewer', name: 'reviewer', client: 'test' } });
		backlog = await schemaBacklog(schema);
		repo = makeRepo({ 'README.md': '# demo\n', 'src/page.html': '<p>old</p>\n', 'gone.txt': 'bye\n' });
		await reviewer.request('card/create', {
			cards: ['WS-1', 'WS-BIG', 'WS-FAR', 'WS-LANDED', 'PLAIN'].map(id => ({ id, title: `Card ${id}` })),
		});
	});

	after(async () => {
		reviewer.close();
		await backlog.close();
		await hub.stop();
		removeDataDir(dataDir);
		await dropSchema(schema);
		repo.cleanup();
	});

	it('answers the files, their changes and counts, and the patch of the branch since its base', async () => {
		await giveWorkspace(backlog, repo.root, 'WS-1', {
			'src/page.html': '<p>new</p>\n<script>alert("x")</script>\n',
			'src/added.ts': 'export const a = 1;\n',
		});
		const d = await reviewer.request('card/diff', { cardId: 'WS-1' });
		assert.equal(d.cardId, 'WS-1');
		assert.equal(d.branch, 'baton/WS-1');
		assert.equal(d.base, 'main');
		assert.equal(d.root, repo.root);
		assert.equal(d.path, `${repo.root}/.baton/worktrees/WS-1`);
		assert.match(d.head, /^[0-9a-f]{40}$/);
		assert.deepEqual(d.files, [
			{ path: 'src/added.ts', status: 'added', insertions: 1, deletions: 0 },
			{ path: 'src/page.html', status: 'modified', insertions: 2, deletions: 1 },
		]);
		assert.equal(d.truncated, false);
		assert.match(d.patch, /^\+<script>alert\("x"\)<\/script>$/m, 'the text as git wrote it');
		assert.equal(parsePatch(d.patch).length, 2);

		const one = await reviewer.request('card/diff', { cardId: 'WS-1', paths: ['src/page.html'] });
		assert.deepEqual(
			one.files.map(f => f.path),
			['src/page.html'],
		);
		assert.doesNotMatch(one.patch, /added\.ts/);
	});

	it(`keeps each file within ${diffLimits.fileBytes / 1024} KiB, the patch within ${diffLimits.patchBytes / 1024} KiB, and says what was cut`, async () => {
		const line = (i: number) => `line ${i} ${'x'.repeat(60)}\n`;
		const big = Array.from({ length: 6000 }, (_, i) => line(i)).join('');
		await giveWorkspace(backlog, repo.root, 'WS-BIG', { 'a-small.txt': 'small\n', 'b-big.txt': big, 'c-big.txt': big });
		const d = await reviewer.request('card/diff', { cardId: 'WS-BIG' });
		assert.equal(d.truncated, true);
		assert.equal(d.files.length, 3, 'every file is listed');
		assert.ok(Buffer.byteLength(d.patch) <= diffLimits.patchBytes, `${Buffer.byteLength(d.patch)} bytes`);
		assert.ok(d.patchBytes > 2 * big.length, `${d.patchBytes} bytes in all`);
		// Each big file's one hunk is over a file's budget (diffLimits.fileBytes): left out, and marked.
		assert.deepEqual(
			d.files.map(f => [f.path, f.cut === true]),
			[
				['a-small.txt', false],
				['b-big.txt', true],
				['c-big.txt', true],
			],
		);
		assert.deepEqual(
			parsePatch(d.patch).map(p => p.newFileName),
			['b/a-small.txt'],
		);
		assert.equal(d.show, `git -C ${repo.root} diff ${d.mergeBase} ${d.head}`, 'how to see it whole');
		const c = await reviewer.request('card/diff', { cardId: 'WS-BIG', paths: ['c-big.txt'] });
		assert.equal(c.truncated, false);
		assert.equal(c.files[0]?.insertions, 6000);
	});

	it('keeps a card’s workspace through data/export and data/import (a lossless copy)', async () => {
		const { cards } = await reviewer.request('data/export', {});
		const ws1 = cards.find(c => c.id === 'WS-1');
		assert.ok(ws1?.workspace);
		await reviewer.request('data/import', { cards: [{ ...ws1, id: 'WS-1-COPY', idempotencyKey: null }] });
		const copy = (await reviewer.request('card/get', { cardId: 'WS-1-COPY' })).card;
		assert.deepEqual(copy.workspace, ws1.workspace);
		const d = await reviewer.request('card/diff', { cardId: 'WS-1-COPY' });
		assert.equal(d.branch, 'baton/WS-1');
	});

	it('says why there is no diff: no workspace, another host, landed, unknown card', async () => {
		await refused(reviewer.request('card/diff', { cardId: 'PLAIN' }), 'not_found', /PLAIN has no workspace/);
		await giveWorkspace(backlog, repo.root, 'WS-FAR', { 'far.txt': 'far\n' }, { host: 'build-box-7' });
		await refused(
			reviewer.request('card/diff', { cardId: 'WS-FAR' }),
			'unavailable',
			/on the machine build-box-7.*runs git only for its own/,
		);
		await giveWorkspace(
			backlog,
			repo.root,
			'WS-LANDED',
			{ 'landed.txt': 'l\n' },
			{ landed: { mode: 'squash', commit: '0123456789abcdef0123456789abcdef01234567', at: new Date().toISOString() } },
		);
		await refused(
			reviewer.request('card/diff', { cardId: 'WS-LANDED' }),
			'not_found',
			/landed into main \(squash, commit 0123456789ab\)/,
		);
		await refused(reviewer.request('card/diff', { cardId: 'NOPE' }), 'not_found');
	});
});
