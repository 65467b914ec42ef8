/**
 * Webhooks as a new user meets them, through the CLI (in process: runCliHere; the
 * restore as a child) and a real HTTP receiver. The secret is made with the guide's own shell line and
 * every delivery is checked with the guide's `verify()` snippet, extracted from docs/guide.md and run
 * as written in a Node process. A full backup restored into a copy brings the hook back paused (saying
 * so); `baton hooks resume` lets it deliver, and the copy's event at the same seq as the original's
 * arrives under another delivery id, so a receiver that de-duplicates on it keeps both.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type IncomingMessage, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { BacklogEvent, Hook } from '../../core/protocol';
import { cleanupDataDir, ensureBuilt, repoRoot, runBaton, runCliHere, tempDataDir, waitFor } from '../helpers/mcp';

interface Delivery {
	id: string;
	event: BacklogEvent;
	raw: string;
	headers: Record<string, string>;
}

/** The guide's code block that follows "Check it on the raw body", exactly as printed. */
function guideSnippet(lang: 'js' | 'sh', after: string): string {
	const guide = readFileSync(join(repoRoot, 'docs', 'guide.md'), 'utf8');
	const start = guide.indexOf(after);
	assert.ok(start >= 0, `docs/guide.md has "${after}"`);
	const block = new RegExp('```' + lang + '\\n([\\s\\S]*?)\\n```').exec(guide.slice(start));
	assert.ok(block?.[1] !== undefined, `a ${lang} block after "${after}"`);
	return block[1];
}

/** Runs the guide's verify() snippet as written (HOME=home, where the guide keeps the secret) on each delivery. */
function verifyAsGuide(home: string, deliveries: readonly Delivery[]): boolean[] {
	const harness = `\n;process.stdout.write(JSON.stringify(JSON.parse(require('node:fs').readFileSync(0, 'utf8')).map(d => verify(secret, d.raw, d.headers))));`;
	const r = spawnSync(process.execPath, ['-e', guideSnippet('js', 'Check it on the raw') + harness], {
		env: { PATH: process.env.PATH ?? '', HOME: home },
		input: JSON.stringify(deliveries.map(d => ({ raw: d.raw, headers: d.headers }))),
		encoding: 'utf8',
	});
	assert.equal(r.status, 0, r.stderr);
	return JSON.parse(r.stdout) as boolean[];
}

describe('webhooks of a restored copy, checked with the guide’s own snippet', () => {
	const got: Delivery[] = [];
	let server: Server;
	let url: string;
	let home: string;
	let secretFile: string;
	let original: string;
	let copy: string;

	before(async () => {
		ensureBuilt();
		server = createServer((req: IncomingMessage, res) => {
			const chunks: Buffer[] = [];
			req.on('data', (c: Buffer) => chunks.push(c));
			req.on('end', () => {
				const raw = Buffer.concat(chunks).toString('utf8');
				const body = JSON.parse(raw) as { event?: BacklogEvent };
				if (body.event !== undefined) {
					const headers = Object.fromEntries(
						Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? (v[0] ?? '') : (v ?? '')]),
					);
					got.push({ id: headers['x-baton-delivery'] ?? '', event: body.event, raw, headers });
				}
				res.end();
			});
		});
		await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
		url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
		home = mkdtempSync('/tmp/bt-home-');
		mkdirSync(join(home, '.config', 'baton'), { recursive: true });
		// The guide's line that makes the secret, run as written (with this HOME).
		const makeSecret = guideSnippet('sh', 'It is off until you add a hook').split('\n')[0] ?? '';
		assert.match(makeSecret, /^head -c 32 \/dev\/urandom \| base64 > ~\/\.config\/baton\/hook-secret/);
		const sh = spawnSync('sh', ['-c', makeSecret], { env: { PATH: process.env.PATH ?? '', HOME: home } });
		assert.equal(sh.status, 0, String(sh.stderr));
		secretFile = join(home, '.config', 'baton', 'hook-secret');
		assert.ok(readFileSync(secretFile, 'utf8').endsWith('\n'), 'base64 ends the secret file with a newline');
		original = tempDataDir();
		copy = tempDataDir();
	});

	after(async () => {
		await cleanupDataDir(original);
		await cleanupDataDir(copy);
		server.closeAllConnections();
		await new Promise(resolve => server.close(resolve));
		rmSync(home, { recursive: true, force: true });
	});

	/** The CLI in process (runCliHere), its hubs the bundle's; `baton restore` runs as a child below. */
	async function cli(dataDir: string, args: string[]): Promise<string> {
		const r = await runCliHere(args, { dataDir });
		assert.equal(r.code, 0, `baton ${args.join(' ')}: ${r.stdout}${r.stderr}`);
		return r.stdout;
	}

	async function hooks(dataDir: string): Promise<Hook[]> {
		return (JSON.parse(await cli(dataDir, ['hooks', '--json'])) as { hooks: Hook[] }).hooks;
	}

	async function arrived(cardId: string): Promise<Delivery> {
		await waitFor(() => got.some(d => d.event.cardId === cardId), 20_000, `${cardId} delivered`);
		const found = got.find(d => d.event.cardId === cardId);
		assert.ok(found);
		return found;
	}

	it('verifies a real delivery with the guide’s verify() and the guide’s secret', async () => {
		await cli(original, ['hooks', 'add', url, '--secret-file', secretFile]);
		await cli(original, ['create', 'First card', '--id', 'ORIG-1']);
		const first = await arrived('ORIG-1');
		assert.deepEqual(verifyAsGuide(home, [first]), [true]);
		// A changed body fails the same check: the snippet really checks.
		assert.deepEqual(verifyAsGuide(home, [{ ...first, raw: first.raw.replace('ORIG-1', 'ORIG-9') }]), [false]);
	});

	it('restores the hook paused, resumes it on request, and gives the copy delivery ids of its own', async () => {
		await waitFor(async () => (await hooks(original))[0]?.behind === 0, 20_000, 'the original caught up');
		const backup = join(home, 'backup.jsonl.gz');
		await cli(original, ['export', '--with-history', '--out', backup]);
		const restored = await runBaton(['restore', backup], { dataDir: copy, timeoutMs: 60_000 });
		assert.equal(restored.code, 0, restored.stderr);
		const hookId = (await hooks(original))[0]?.id ?? '';
		assert.match(
			restored.stdout,
			new RegExp(
				`1 webhook restored paused \\(${hookId}\\), so this copy does not post to the original's receivers; \`baton hooks resume ID\` lets one deliver\\.`,
			),
		);

		// The same next seq in both backlogs: one event each, two different cards.
		await cli(copy, ['create', 'Copy card', '--id', 'COPY-1']);
		await cli(original, ['create', 'Second card', '--id', 'ORIG-2']);
		const second = await arrived('ORIG-2');
		const listed = await cli(copy, ['hooks']);
		assert.match(
			listed,
			new RegExp(
				`${hookId} .*\\n.*\\n  PAUSED: restored from a backup at \\S+; the original may still deliver it; \`baton hooks resume ${hookId}\` lets it deliver`,
			),
		);
		const paused = (await hooks(copy))[0];
		assert.equal(paused?.behind, 1);
		assert.equal(got.filter(d => d.event.cardId === 'COPY-1').length, 0, 'nothing from the paused copy');

		const resumed = await cli(copy, ['hooks', 'resume', hookId]);
		assert.match(resumed, new RegExp(`^Resumed hook ${hookId}: ${url} \\(from seq \\d+ on, 1 event behind\\)`));
		const fromCopy = await arrived('COPY-1');
		assert.equal(fromCopy.event.seq, second.event.seq, 'the same seq in both backlogs');
		assert.notEqual(fromCopy.id, second.id, 'two events, two delivery ids');
		assert.deepEqual(
			new Set(got.map(d => d.id)).size,
			got.length,
			`every delivery id once: ${got.map(d => `${d.id} ${d.event.cardId}`).join(', ')}`,
		);
		assert.match(fromCopy.id, new RegExp(`^${hookId}-[0-9a-f]{8}-${fromCopy.event.seq}$`));
		assert.deepEqual(verifyAsGuide(home, [second, fromCopy]), [true, true]);
		assert.equal((await hooks(copy))[0]?.paused, null);
	});

	it('refuses to resume a hook that does not exist, changing nothing', async () => {
		const r = await runBaton(['hooks', 'resume', 'hk00000000'], { dataDir: copy });
		assert.equal(r.code, 1);
		assert.match(r.stderr, /No hook hk00000000\. baton hooks lists them\./);
	});
});
