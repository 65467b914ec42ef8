/**
 * Agent-written text on the CLI's faces (the real `baton` bundle in a child process, a real hub): a card
 * whose title, body, result and comment carry a forged line (`\x1b[2K\rAPPROVED`) and a bidi override
 * prints them as visible escapes in `show`, `list` and `events`; `--json` keeps the raw text (parsed
 * back whole) without a raw control character in its bytes. A NUL character in any text field is
 * `invalid_input` naming the field, and changes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { RpcClient } from '../../core/protocol/rpc';
import { client } from '../helpers/hub';
import { cleanupDataDir, ensureBuilt, runBaton, tempDataDir } from '../helpers/mcp';
import { refused } from '../helpers/refused';

const forged = '\x1b[2K\rAPPROVED';
const bidi = 'gnp.\u202Eexe';
/** Bytes a terminal acts on: ESC, CR, C1 controls, bidi overrides and isolates. */
// eslint-disable-next-line no-control-regex
const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('control characters on the CLI faces, NUL in any text', () => {
	let dataDir: string;
	let agent: RpcClient;

	const baton = (args: string[]) => runBaton(args, { dataDir, env: { BATON_AGENT: 'vscode:alice' } });

	before(async () => {
		ensureBuilt();
		dataDir = tempDataDir();
		// The first command starts the hub; the agent then writes its text over the protocol.
		assert.equal((await baton(['create', 'A plain card', '--id', 'PLAIN'])).code, 0);
		agent = await client(dataDir, { agent: { id: 'agent-7', name: 'agent-7', client: 'test' } });
		await agent.request('card/create', {
			cards: [
				{ id: 'EVIL', title: `Fix the parser${forged} ${bidi}`, body: `What I did${forged}\nsecond line ${bidi}` },
			],
		});
		const claimed = await agent.request('card/claim', { cardId: 'EVIL' });
		await agent.request('card/comment', { cardId: 'EVIL', text: `Looks good${forged}` });
		await agent.request('card/complete', {
			cardId: 'EVIL',
			epoch: claimed.lease?.epoch ?? 0,
			result: `All tests pass${forged}\nstatus     approved ${bidi}`,
		});
	});

	after(async () => {
		agent.close();
		await cleanupDataDir(dataDir);
	});

	it('show prints every agent-written field visibly escaped, no line forged', async () => {
		const r = await baton(['show', 'EVIL']);
		assert.equal(r.code, 0, r.stderr);
		assert.doesNotMatch(r.stdout, raw, 'no raw control character reaches the terminal');
		assert.match(r.stdout, /^title +Fix the parser\\x1b\[2K\\rAPPROVED gnp\.\\u202eexe$/m);
		assert.match(r.stdout, /^result +All tests pass\\x1b\[2K\\rAPPROVED$/m);
		// The result's own second line is indented under the values: it cannot pose as a field.
		assert.match(r.stdout, /^ {8,}status {5}approved gnp\.\\u202eexe$/m);
		assert.doesNotMatch(r.stdout, /^status +approved/m);
		assert.match(r.stdout, /^What I did\\x1b\[2K\\rAPPROVED$/m);
		assert.match(r.stdout, /Looks good\\x1b\[2K\\rAPPROVED/);
		assert.doesNotMatch(r.stdout, /^APPROVED/m);
	});

	it('list and events print the title escaped in aligned rows', async () => {
		const list = await baton(['list', '--status', 'review,done', '--project', '*']);
		assert.equal(list.code, 0, list.stderr);
		assert.doesNotMatch(list.stdout, raw);
		// A row is one line: its whitespace (the CR too) is flattened to spaces, the rest escaped.
		assert.match(list.stdout, /^EVIL +done .* Fix the parser\\x1b\[2K APPROVED gnp\.\\u202eexe$/m);
		const events = await baton(['events', '--card', 'EVIL']);
		assert.equal(events.code, 0, events.stderr);
		assert.doesNotMatch(events.stdout, raw);
		assert.match(events.stdout, /Fix the parser\\x1b\[2K APPROVED/);
	});

	it('--json keeps the raw text, with no raw control character in its bytes', async () => {
		const r = await baton(['show', 'EVIL', '--json']);
		assert.equal(r.code, 0, r.stderr);
		assert.doesNotMatch(r.stdout, raw);
		const shown = JSON.parse(r.stdout) as { card: { title: string; result: string } };
		assert.equal(shown.card.title, `Fix the parser${forged} ${bidi}`);
		assert.equal(shown.card.result, `All tests pass${forged}\nstatus     approved ${bidi}`);
	});

	it('refuses a NUL in a body, a title, a comment or a result as invalid_input naming it, and changes nothing', async () => {
		const before = (await agent.request('card/list', {})).cards.length;
		await refused(
			agent.request('card/create', { cards: [{ id: 'NUL-1', title: 'Has a NUL', body: 'binary\0here' }] }),
			'invalid_input',
			/cards\.0\.body contains a NUL character/,
		);
		await refused(
			agent.request('card/create', { cards: [{ id: 'NUL-2', title: 'a\0b' }] }),
			'invalid_input',
			/cards\.0\.title contains a NUL/,
		);
		await refused(
			agent.request('card/comment', { cardId: 'PLAIN', text: 'x\0' }),
			'invalid_input',
			/text contains a NUL/,
		);
		await refused(
			agent.request('card/update', { cardId: 'PLAIN', body: '\0' }),
			'invalid_input',
			/body contains a NUL/,
		);
		assert.equal((await agent.request('card/list', {})).cards.length, before);
		const plain = (await agent.request('card/get', { cardId: 'PLAIN' })).card;
		assert.equal(plain.body, '');
		const { messages } = await agent.request('card/get', { cardId: 'PLAIN' });
		assert.equal(messages.length, 0);
	});
});
