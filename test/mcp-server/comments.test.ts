/**
 * Messages on a card through the real faces against one real hub: an agent posts with the
 * MCP `comment` tool over stdio (the SDK client) and reads it back in `show`; a human posts with `baton
 * comment` (the CLI in process: runCliHere) and sees both in `baton show`; bad input (empty, over 4
 * KiB, unknown card) is refused with a clear error by each face and changes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { limits } from '../../core/protocol';
import { type Agent, cleanupDataDir, ensureBuilt, runCliHere, startAgent, tempDataDir, textOf } from '../helpers/mcp';

let dataDir: string;
let agent: Agent | undefined;

/** The CLI in process (runCliHere): its words and exit codes; the bundle end to end is cliRun.test.ts's. */
function baton(args: string[]): ReturnType<typeof runCliHere> {
	return runCliHere(args, { dataDir, env: { BATON_AGENT: 'vscode:alice' } });
}

/** The MCP agent the first test started. */
function mcp(): Agent {
	if (agent === undefined) {
		throw new Error('the first test starts the MCP agent');
	}
	return agent;
}

async function json<T>(args: string[]): Promise<T> {
	const r = await baton([...args, '--json']);
	assert.equal(r.code, 0, `baton ${args.join(' ')} exited ${r.code}: ${r.stdout} ${r.stderr}`);
	return JSON.parse(r.stdout) as T;
}

interface Message {
	id: number;
	from: string;
	text: string;
	question?: boolean;
	at: string;
}

before(() => {
	ensureBuilt();
	dataDir = tempDataDir();
});

after(async () => {
	await agent?.close().catch(() => undefined);
	await cleanupDataDir(dataDir);
});

describe('messages on a card through MCP and the CLI', () => {
	it('an agent comments with the MCP tool and reads its message in show', async () => {
		await json(['create', 'Port the parser', '--id', 'C1']);
		agent = await startAgent(dataDir, { env: { BATON_AGENT: 'claude-1' } });
		const posted = await agent.json<{ message: { id: number; from: string; at: string } }>('comment', {
			cardId: 'C1',
			text: 'Which API version, v1 or v2?',
			question: true,
		});
		assert.equal(posted.message.id, 1);
		assert.equal(posted.message.from, 'claude-1');
		const shown = await agent.json<{ messages: Message[]; history: { type: string; message?: number }[] }>('show', {
			cardId: 'C1',
		});
		assert.deepEqual(
			shown.messages.map(m => [m.id, m.from, m.text, m.question]),
			[[1, 'claude-1', 'Which API version, v1 or v2?', true]],
		);
		const commented = shown.history.find(e => e.type === 'commented');
		assert.equal(commented?.message, 1, 'the history names the message without repeating its text');
	});

	it('a human replies with baton comment; baton show prints both, newest last', async () => {
		const r = await json<{ message: Message; card: { id: string } }>(['comment', 'C1', 'Use **v2**.\nv1 is gone.']);
		assert.equal(r.message.id, 2);
		assert.equal(r.message.from, 'vscode:alice');
		assert.equal(r.message.question, false);
		assert.equal(r.card.id, 'C1');
		const asked = await baton(['comment', 'C1', 'Anything else?', '--question']);
		assert.equal(asked.code, 0, asked.stderr);
		assert.match(asked.stdout, /Asked message 3 on C1\. C1 is ready/);

		const shown = await baton(['show', 'C1']);
		assert.equal(shown.code, 0, shown.stderr);
		const messages = shown.stdout.slice(shown.stdout.indexOf('Messages:'));
		assert.match(messages, /#1 {2}\S+ \S+ {2}claude-1 {2}\(question\)\n {6}Which API version, v1 or v2\?/);
		assert.match(messages, /#2 {2}\S+ \S+ {2}vscode:alice\n {6}Use \*\*v2\*\*\.\n {6}v1 is gone\./);
		assert.ok(messages.indexOf('#1') < messages.indexOf('#2') && messages.indexOf('#2') < messages.indexOf('#3'));
		assert.match(shown.stdout, /commented .*message #2: Use \*\*v2\*\*\. v1 is gone\./);

		const viaMcp = await mcp().json<{ messages: Message[] }>('show', { cardId: 'C1' });
		assert.deepEqual(
			viaMcp.messages.map(m => m.id),
			[1, 2, 3],
		);
	});

	it('refuses empty text, text over 4 KiB and an unknown card, in every face, changing nothing', async () => {
		const tooLong = 'x'.repeat(limits.messageBytes + 1);
		for (const text of ['', tooLong]) {
			const r = await baton(['comment', 'C1', text, '--json']);
			assert.equal(r.code, 1, `${r.stdout} ${r.stderr}`);
			const { error } = JSON.parse(r.stdout) as { error: { code: string; message: string } };
			assert.equal(error.code, 'invalid_input');
			assert.match(
				error.message,
				text === '' ? /TEXT: text must not be empty/ : /TEXT: text is larger than 4096 bytes/,
			);
		}
		const unknown = await baton(['comment', 'nope', 'hello', '--json']);
		assert.equal(unknown.code, 1);
		assert.equal((JSON.parse(unknown.stdout) as { error: { code: string } }).error.code, 'not_found');

		const a = mcp();
		const tooBig = await a.call('comment', { cardId: 'C1', text: tooLong });
		assert.equal(tooBig.isError, true);
		assert.match(textOf(tooBig), /invalid_input.*text.*4096 bytes/);
		const missing = await a.call('comment', { cardId: 'nope', text: 'hello' });
		assert.equal(missing.isError, true);
		assert.match(textOf(missing), /not_found/);

		const shown = await json<{ messages: Message[] }>(['show', 'C1']);
		assert.equal(shown.messages.length, 3, 'nothing was posted');
		const usage = await baton(['comment', 'C1']);
		assert.equal(usage.code, 2, 'TEXT is required');
	});
});
