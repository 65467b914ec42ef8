/**
 * Messages on a card through the Backlog on real PGlite and PostgreSQL: a post stores the
 * message and appends one `commented` event carrying it and the unchanged card; `get` lists the
 * card's messages newest last; a re-sent request answers the first post; an unknown card, empty text
 * and text over 4 KiB are refused and change nothing; a deleted card takes its messages with it. The
 * inbox rules: what others post reaches the card's holder, an ack counts once and only from the
 * holder, and a question's needsInput is lowered only by someone other than the asker.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Backlog, OpContext } from '../../core/backlog';
import { ManualClock } from '../../core/clock';
import { type BacklogEvent, CommentParams, limits } from '../../core/protocol';
import { openTestBacklog, storeKinds, type TestBacklog } from '../helpers/backlog';
import { refused } from '../helpers/refused';

const human: OpContext = { actor: 'vscode:alice' };
const agent: OpContext = { actor: 'claude-1' };

let counter = 0;
const newId = (): string => `m${++counter}`;

for (const kind of storeKinds) {
	describe(`messages on ${kind}`, () => {
		let t: TestBacklog;
		let b: Backlog;
		const clock = new ManualClock('2026-03-01T09:00:00.000Z');
		const committed: BacklogEvent[] = [];

		before(async () => {
			t = await openTestBacklog(kind, { clock });
			b = t.backlog;
			b.onCommitted(events => committed.push(...events));
		});
		after(async () => {
			await t.cleanup();
		});

		async function card(): Promise<string> {
			const id = newId();
			await b.create(human, { cards: [{ id, title: 'Port the parser' }] });
			return id;
		}

		it('stores a message and logs a commented event with the message and the unchanged card', async () => {
			const id = await card();
			const before = (await b.get(human, { cardId: id })).card;
			const seq = await b.lastSeq();
			const { message, card: after } = await b.comment(human, { cardId: id, text: 'Use the **v2** API' });
			assert.deepEqual(message, {
				id: 1,
				cardId: id,
				from: 'vscode:alice',
				text: 'Use the **v2** API',
				question: false,
				at: '2026-03-01T09:00:00.000Z',
			});
			assert.deepEqual(after, before, 'a message is not an edit: the card is unchanged, version included');
			const { events } = await b.listEvents({ afterSeq: seq, cardId: id });
			assert.equal(events.length, 1);
			const [event] = events;
			assert.ok(event !== undefined);
			assert.equal(event.type, 'commented');
			assert.equal(event.actor, 'vscode:alice');
			assert.deepEqual(event.data.message, message);
			assert.deepEqual(event.data.card, before);
			assert.deepEqual(
				committed.filter(e => e.cardId === id && e.type === 'commented').map(e => e.seq),
				[event.seq],
			);
		});

		it('lists a card’s messages in get, newest last, with questions marked', async () => {
			const id = await card();
			await b.comment(human, { cardId: id, text: 'first' });
			await b.comment(agent, { cardId: id, text: 'Which API version?', question: true });
			clock.advance(5);
			await b.comment(human, { cardId: id, text: 'v2' });
			const other = await card();
			await b.comment(human, { cardId: other, text: 'elsewhere' });
			const { messages } = await b.get(human, { cardId: id });
			assert.deepEqual(
				messages.map(m => [m.id, m.from, m.text, m.question]),
				[
					[1, 'vscode:alice', 'first', false],
					[2, 'claude-1', 'Which API version?', true],
					[3, 'vscode:alice', 'v2', false],
				],
			);
			assert.deepEqual((await b.get(human, { cardId: await card() })).messages, []);
		});

		it('answers a re-sent request with the first post, posting once', async () => {
			const id = await card();
			const keyed = { ...agent, requestKey: `${id}-comment-1` };
			const first = await b.comment(keyed, { cardId: id, text: 'Done with step 1' });
			const seq = await b.lastSeq();
			clock.advance(1);
			const again = await b.comment(keyed, { cardId: id, text: 'Done with step 1' });
			assert.deepEqual(again, first);
			assert.equal(await b.lastSeq(), seq, 'no second event');
			assert.equal((await b.get(human, { cardId: id })).messages.length, 1);
		});

		it('refuses an unknown card, empty text and text over 4 KiB, changing nothing', async () => {
			const id = await card();
			const seq = await b.lastSeq();
			await refused(b.comment(human, { cardId: 'no-such-card', text: 'hello' }), 'not_found', /no-such-card/);
			await refused(b.comment(human, { cardId: id, text: '  \n ' }), 'invalid_input', /empty/);
			// 4 KiB of 2-byte characters plus one: counted in UTF-8 bytes, not characters.
			const tooLong = 'é'.repeat(limits.messageBytes / 2) + 'x';
			await refused(b.comment(human, { cardId: id, text: tooLong }), 'invalid_input', /4097 bytes; the limit is 4096/);
			await b.comment(human, { cardId: id, text: 'é'.repeat(limits.messageBytes / 2) });
			assert.equal(await b.lastSeq(), seq + 1, 'only the message that fits was logged');
			assert.equal((await b.get(human, { cardId: id })).messages.length, 1);
		});

		it('the protocol schema refuses the same input at the edge', () => {
			assert.equal(CommentParams.safeParse({ cardId: 'A1', text: '' }).success, false);
			assert.equal(CommentParams.safeParse({ cardId: 'A1', text: 'x'.repeat(limits.messageBytes + 1) }).success, false);
			assert.equal(CommentParams.safeParse({ cardId: 'A1', text: 'ok', from: 'someone' }).success, false);
			assert.equal(CommentParams.safeParse({ cardId: 'A1', text: 'ok', question: true }).success, true);
		});

		it('numbers messages without twins when two post at once', async () => {
			const id = await card();
			await Promise.all(
				Array.from({ length: 6 }, (_, i) => b.comment(i % 2 === 0 ? human : agent, { cardId: id, text: `m${i}` })),
			);
			const { messages } = await b.get(human, { cardId: id });
			assert.deepEqual(
				messages.map(m => m.id),
				[1, 2, 3, 4, 5, 6],
			);
		});

		it('deletes a card’s messages with the card', async () => {
			const id = await card();
			await b.comment(human, { cardId: id, text: 'soon gone' });
			await b.delete(human, { cardId: id });
			await b.create(human, { cards: [{ id, title: 'Same id, new card' }] });
			assert.deepEqual((await b.get(human, { cardId: id })).messages, []);
		});

		it("hands the holder what others posted, and records delivery once, on the holder's ack only", async () => {
			const id = await card();
			const { message: early } = await b.comment(human, { cardId: id, text: 'posted before the claim' });
			assert.deepEqual(await b.pendingInbox('claude-1', id), [], 'nobody holds the card yet');
			assert.ok((await b.cardsWithUndelivered()).includes(id));
			await b.claim(agent, { cardId: id, ttlSeconds: 300 });
			const { message: own } = await b.comment(agent, { cardId: id, text: 'my own note' });
			const { message: later } = await b.comment(human, { cardId: id, text: 'posted while held' });
			const pending = await b.pendingInbox('claude-1', id);
			assert.deepEqual(
				pending.map(m => [m.id, m.from, m.deliveredAt]),
				[
					[early.id, 'vscode:alice', null],
					[later.id, 'vscode:alice', null],
				],
				"the holder's own message is never in its inbox",
			);
			assert.deepEqual(await b.pendingInbox('codex-2'), [], 'another agent holds nothing here');

			const keys = { messages: [early, own, later].map(m => ({ cardId: id, id: m.id })) };
			const seq = await b.lastSeq();
			for (const ctx of [human, { actor: 'codex-2' }]) {
				assert.deepEqual((await b.inboxAck(ctx, keys)).delivered, [], `${ctx.actor}'s ack counts for nothing`);
			}
			const at = new Date(clock.now()).toISOString();
			const { delivered } = await b.inboxAck(agent, keys);
			assert.deepEqual(
				delivered.map(m => [m.id, m.deliveredAt]),
				[
					[early.id, at],
					[later.id, at],
				],
				'only what others posted is delivered',
			);
			clock.advance(5);
			assert.deepEqual((await b.inboxAck(agent, keys)).delivered, [], 'a second ack changes nothing');
			assert.deepEqual(await b.pendingInbox('claude-1'), []);
			const { events } = await b.listEvents({ afterSeq: seq, cardId: id });
			assert.deepEqual(
				events.map(e => [e.type, e.actor, e.data.messages?.map(m => m.id)]),
				[['delivered', 'claude-1', [early.id, later.id]]],
			);
			const shown = (await b.get(human, { cardId: id })).messages;
			assert.deepEqual(
				shown.map(m => [m.id, m.deliveredAt]),
				[
					[early.id, at],
					[own.id, null],
					[later.id, at],
				],
			);
		});

		it('an ack after the card changed hands delivers nothing', async () => {
			const id = await card();
			const claimed = await b.claim(agent, { cardId: id, ttlSeconds: 300 });
			const { message } = await b.comment(human, { cardId: id, text: 'too late' });
			await b.release(agent, { cardId: id, epoch: claimed.lease?.epoch, reason: 'switching' });
			const ack = await b.inboxAck(agent, { messages: [{ cardId: id, id: message.id }] });
			assert.deepEqual(ack.delivered, []);
			await b.claim({ actor: 'codex-2' }, { cardId: id, ttlSeconds: 300 });
			assert.deepEqual(
				(await b.pendingInbox('codex-2')).map(m => m.text),
				['too late'],
				'the next holder gets it',
			);
		});

		it('a question raises needsInput; only an answer from someone else lowers it', async () => {
			const id = await card();
			const asked = await b.comment(agent, { cardId: id, text: 'v1 or v2?', question: true });
			assert.equal(asked.card.needsInput, true);
			assert.equal((await b.get(human, { cardId: id })).card.needsInput, true);
			const again = await b.comment(agent, { cardId: id, text: 'still wondering' });
			assert.equal(again.card.needsInput, true, "the asker's own message answers nothing");
			const answered = await b.comment(human, { cardId: id, text: 'v2' });
			assert.equal(answered.card.needsInput, false);
			assert.equal((await b.get(human, { cardId: id })).card.needsInput, false);
			const humanAsks = await b.comment(human, { cardId: id, text: 'done yet?', question: true });
			assert.equal(humanAsks.card.needsInput, true);
			const agentAnswers = await b.comment(agent, { cardId: id, text: 'almost' });
			assert.equal(agentAnswers.card.needsInput, false);
			assert.equal(answered.card.version, asked.card.version, 'the flag is not an edit: no version bump');
		});
	});
}
