/**
 * The review desk's commands: Review Next Card (the oldest card in review, its detail
 * shown and, for a card with a workspace, its branch in the multi-file diff editor, then
 * Approve / Request Changes / Open Changes), Approve Card…, Request Changes… (the note is required),
 * Message Agent… (a card someone else holds), Reply to Agent… (a card whose agent asked), Open Changes
 * (the card's workspace branch, else the commit or branch its result names) and Open Card Detail.
 * Pickers list only the cards a command applies to; tests and notifications pass the card and the
 * answers instead of prompts. Who may approve what is the hub's to decide: a refusal is shown as it comes.
 */
import * as vscode from 'vscode';
import { BatonError } from '../../core/errors';
import type { Card, Message } from '../../core/protocol';
import { CardDocuments, cardScheme } from '../cardDocument';
import { type ChangeRef, parseChangeRefs, refLabel } from '../changeRefs';
import { openChanges } from '../gitChanges';
import { needingInput, toReview } from '../reviewQueue';
import { GitShowProvider, gitShowScheme, openWorkspaceChanges } from '../workspaceChanges';
import { commandIds } from './ids';
import { type CommandKit, optionsOf } from './kit';

/** Answers a caller (a test, a notification) may give instead of the prompts. */
interface ReviewOptions {
	note?: string;
	text?: string;
	action?: 'approve' | 'requestChanges' | 'openChanges';
	/** Open Changes: which ref (sha or branch name) when the result names several. */
	ref?: string;
}

/** A required, non-blank note within the protocol's length. */
const noteSchema = (max: number) => ({
	safeParse: (v: unknown) =>
		typeof v === 'string' && v.trim() !== '' && v.length <= max
			? { success: true }
			: {
					success: false,
					error: {
						issues: [
							{ message: typeof v === 'string' && v.length > max ? `at most ${max} characters` : 'say what to change' },
						],
					},
				},
});

export function registerReviewCommands(kit: CommandKit): vscode.Disposable[] {
	const { hub, register, resolveCard, all, ask, notify, me } = kit;
	const docs = new CardDocuments(hub);
	const reviewable = () => toReview(hub.cards.values(), me());
	const waitingOn = (card: Card) => all(d => d.status !== 'done' && d.dependsOn.includes(card.id)).map(d => d.id);

	const approve = async (card: Card, opts: ReviewOptions) => {
		const r = await hub.request('card/review', {
			cardId: card.id,
			approve: true,
			version: card.version,
			...(opts.note ? { note: opts.note } : {}),
		});
		notify(
			`Approved ${card.id}.${r.unblocked.length > 0 ? ` Now claimable: ${r.unblocked.join(', ')}.` : ''}`,
			card.id,
		);
		return r;
	};

	const requestChanges = async (card: Card, opts: ReviewOptions) => {
		const note =
			opts.note ??
			(await ask(`What should change on ${card.id}? The next attempt starts from this note.`, {
				required: true,
				schema: p => noteSchema(p.limits.noteLength),
			}));
		if (note === undefined) {
			return undefined;
		}
		const r = await hub.request('card/review', { cardId: card.id, approve: false, note, version: card.version });
		notify(
			r.card.status === 'blocked'
				? `Requested changes on ${card.id}; its attempts ran out, so it is parked in Blocked.`
				: `Requested changes on ${card.id}; it is ready again and the next claim gets your note.`,
			card.id,
		);
		return r;
	};

	const showChanges = async (card: Card, opts: ReviewOptions) => {
		if (card.workspace !== undefined && opts.ref === undefined) {
			return openWorkspaceChanges(hub, card.id);
		}
		const refs = parseChangeRefs(card.result);
		if (refs.length === 0) {
			throw new BatonError(
				'invalid_input',
				`The result of ${card.id} names no commit or branch. An agent names them with lines like "commit: <sha>" or "branch: <name>".`,
			);
		}
		const wanted = opts.ref?.toLowerCase();
		let ref: ChangeRef | undefined =
			wanted === undefined
				? undefined
				: refs.find(r => (r.kind === 'commit' ? r.sha.startsWith(wanted) : r.name === opts.ref));
		ref ??=
			refs.length === 1
				? refs[0]
				: (
						await vscode.window.showQuickPick(
							refs.map(r => ({ label: refLabel(r), ref: r })),
							{ title: `Changes of ${card.id}` },
						)
					)?.ref;
		return ref && openChanges(card.id, ref);
	};

	const pickReviewCard = (arg: unknown, title: string, effect: (c: Card) => string) =>
		resolveCard(arg, title, reviewable, effect, 'No card waits for your review.');

	const hasChanges = (c: Card) => c.workspace !== undefined || parseChangeRefs(c.result).length > 0;
	return [
		vscode.workspace.registerTextDocumentContentProvider(cardScheme, docs),
		vscode.workspace.registerTextDocumentContentProvider(gitShowScheme, new GitShowProvider()),
		new vscode.Disposable(() => docs.dispose()),
		register(commandIds.reviewNextCard, async arg => {
			const opts = optionsOf(arg) as ReviewOptions;
			await hub.whenAttached();
			const card = reviewable()[0];
			if (!card) {
				notify('No card waits for your review.');
				return undefined;
			}
			await docs.show(card.id);
			if (card.workspace !== undefined) {
				// The agent's branch against its base, beside the card: what is being approved.
				await openWorkspaceChanges(hub, card.id).catch((e: unknown) =>
					notify(`No diff of ${card.id}: ${e instanceof Error ? e.message : String(e)}`),
				);
			}
			const refs = parseChangeRefs(card.result);
			const deps = waitingOn(card);
			const action =
				opts.action ??
				(
					await vscode.window.showQuickPick(
						[
							{
								label: '$(check) Approve',
								detail: `Done${deps.length > 0 ? `; ${deps.join(', ')} can start` : ''}`,
								action: 'approve' as const,
							},
							{
								label: '$(comment-discussion) Request Changes…',
								detail: 'Back to Ready with your note for the next attempt',
								action: 'requestChanges' as const,
							},
							...(hasChanges(card)
								? [
										{
											label: '$(diff) Open Changes',
											detail: card.workspace?.branch ?? refs.map(refLabel).join(', '),
											action: 'openChanges' as const,
										},
									]
								: []),
						],
						{ title: `Review ${card.id} — ${card.title}`, ignoreFocusOut: true },
					)
				)?.action;
			if (action === 'approve') {
				return approve(card, opts);
			}
			if (action === 'requestChanges') {
				return requestChanges(card, opts);
			}
			return action === 'openChanges' ? showChanges(card, opts) : undefined;
		}),
		register(commandIds.approveCard, async (arg, optArg) => {
			const card = await pickReviewCard(arg, 'Approve Card', c => {
				const deps = waitingOn(c);
				return `Approve: done${deps.length > 0 ? `; ${deps.join(', ')} can start` : ''}`;
			});
			return card && approve(card, optionsOf(optArg) as ReviewOptions);
		}),
		register(commandIds.requestChanges, async (arg, optArg) => {
			const card = await pickReviewCard(
				arg,
				'Request Changes',
				c =>
					`Back to Ready with your note (attempt ${c.attempts} of ${c.maxAttempts}${c.attempts >= c.maxAttempts ? ': the last, so it parks in Blocked' : ''})`,
			);
			return card && requestChanges(card, optionsOf(optArg) as ReviewOptions);
		}),
		register(commandIds.messageAgent, async (arg, optArg) => {
			const card = await resolveCard(
				arg,
				'Message Agent',
				() => all(c => c.claimOwner !== null && c.claimOwner !== me()),
				c => `Message ${c.claimOwner ?? 'its agent'}: it gets it with its next tool call`,
				'No agent holds a card right now.',
			);
			if (!card) {
				return undefined;
			}
			const text =
				(optionsOf(optArg) as ReviewOptions).text ??
				(await ask(`Message to ${card.claimOwner ?? 'the agent'} on ${card.id} (markdown)`, {
					required: true,
					schema: p => p.MessageText,
				}));
			if (text === undefined) {
				return undefined;
			}
			const r = await hub.request('card/comment', { cardId: card.id, text });
			notify(`Sent to ${card.claimOwner ?? 'the agent'} on ${card.id}.`);
			return r;
		}),
		register(commandIds.replyToAgent, async (arg, optArg) => {
			const card = await resolveCard(
				arg,
				'Reply to Agent',
				() => needingInput(hub.cards.values()),
				c => `Answer the question on it${c.claimOwner ? ` (${c.claimOwner} gets it with its next tool call)` : ''}`,
				'No agent is waiting for an answer.',
			);
			if (!card) {
				return undefined;
			}
			let text = (optionsOf(optArg) as ReviewOptions).text;
			if (text === undefined) {
				const { messages } = await hub.request('card/get', { cardId: card.id });
				const question = [...messages].reverse().find((m: Message) => m.question);
				const asked = question ? `${question.from} asks: ${question.text.replace(/\s+/g, ' ').slice(0, 400)}` : '';
				text = await ask(asked === '' ? `Reply on ${card.id}` : asked, { required: true, schema: p => p.MessageText });
			}
			if (text === undefined) {
				return undefined;
			}
			const r = await hub.request('card/comment', { cardId: card.id, text });
			notify(`Replied on ${card.id}.`);
			return r;
		}),
		register(commandIds.openChanges, async (arg, optArg) => {
			const card = await resolveCard(
				arg,
				'Open Changes',
				() => all(c => (c.status === 'review' || c.status === 'done' || c.workspace !== undefined) && hasChanges(c)),
				c => `Show ${c.workspace?.branch ?? parseChangeRefs(c.result).map(refLabel).join(', ')} in the diff editor`,
				'No card has a branch, and no card’s result names a commit or branch.',
			);
			return card && showChanges(card, optionsOf(optArg) as ReviewOptions);
		}),
		register(commandIds.showCardDetail, async arg => {
			const card = await resolveCard(
				arg,
				'Open Card Detail',
				() => all(() => true),
				() => 'Show its result, messages and description',
				'The backlog is empty.',
			);
			return card && docs.show(card.id).then(() => card.id);
		}),
	];
}
