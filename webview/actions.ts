/**
 * The board's requests: a move (drop, keyboard, detail button) planned by moves.ts, asked and
 * confirmed through dialogs, shown at once, sent, and rolled back with the hub's reason when refused;
 * reordering Ready; creating and editing cards; linking dependencies; posting a message. It owns no state (BoardState does)
 * and draws nothing itself: every change goes through the host's queue.
 */
import { BatonError } from '../core/errors';
import { type Card, type Message, limits } from '../core/protocol';
import type { RpcClient } from '../core/protocol/rpc';
import { type ColumnId, columnOf } from './columns';
import { askText, confirmDialog } from './dialog';
import { cardFormDialog } from './editor';
import { type MoveRequest, planMove, priorityForDrop, priorityRequest, withAnswer } from './moves';
import { keyboardTarget } from './reviewMoves';
import type { Change } from './change';
import type { BoardState } from './state';

export interface ActionsHost {
	client: RpcClient;
	state: BoardState;
	/** Applies a change to the DOM (batched). */
	queue(change: Change): void;
	showError(error: unknown): void;
	focusCardIfShown(id: string): void;
	openDetail(id: string): void;
	/** The projects the card form offers, and the one a new card starts with (the board's choice). */
	projects(): { known: string[]; preferred: string | undefined };
}

export class BoardActions {
	constructor(private readonly host: ActionsHost) {}

	/** Moves a card to a column (a drop, a detail button); `dropIndex` reorders within Ready. */
	async move(id: string, to: ColumnId, dropIndex: number | undefined): Promise<void> {
		const { state } = this.host;
		const card = state.get(id);
		if (card === undefined) {
			return;
		}
		if (to === 'ready' && card.status === 'ready') {
			if (dropIndex !== undefined) {
				const list = state.column('ready');
				const current = list.findIndex(c => c.id === id);
				// dropIndex counts gaps in the list with the card in it; priorityForDrop counts without.
				const index = current >= 0 && current < dropIndex ? dropIndex - 1 : dropIndex;
				const p = priorityForDrop(list, card, index);
				if (p !== undefined && p !== card.priority) {
					await this.send(id, priorityRequest(card, p), { priority: p });
				}
			}
			return;
		}
		const waitingOn = state.waitingOn(card).map(d => (d.title === undefined ? d.id : `${d.id} (${d.title})`));
		const plan = planMove(card, to, { actor: state.actor, nowMs: Date.now(), waitingOn });
		if (plan.kind === 'none') {
			return;
		}
		if (plan.kind === 'refuse') {
			this.host.showError(plan.reason);
			return;
		}
		if (plan.confirm !== undefined && !(await confirmDialog(plan.label, plan.confirm, plan.label))) {
			return;
		}
		let request = plan.request;
		let optimistic = plan.optimistic;
		if (plan.askReason !== undefined) {
			const answer = await askText(
				plan.label,
				plan.askReason,
				plan.askConfirm ?? 'Block',
				plan.askMaxLength ?? limits.reasonLength,
			);
			if (answer === undefined) {
				return;
			}
			request = withAnswer(request, answer);
			if (request.method === 'card/review') {
				optimistic = { ...optimistic, handoff: answer };
			}
		}
		await this.send(id, request, optimistic);
		this.host.focusCardIfShown(id);
	}

	/** A keyboard move one column left or right (In review is passed over unless the card can land there). */
	moveBy(id: string, step: 1 | -1): void {
		const { state } = this.host;
		const card = state.get(id);
		if (card === undefined) {
			return;
		}
		const to = keyboardTarget(card, step, { actor: state.actor, nowMs: Date.now(), waitingOn: [] });
		if (to !== undefined && to !== columnOf(card.status)) {
			void this.move(id, to, undefined);
		}
	}

	reorder(id: string, delta: -1 | 1): void {
		const list = this.host.state.column('ready');
		const card = this.host.state.get(id);
		const current = list.findIndex(c => c.id === id);
		if (card === undefined || current < 0) {
			return;
		}
		const p = priorityForDrop(list, card, current + delta);
		if (p !== undefined && p !== card.priority) {
			void this.send(id, priorityRequest(card, p), { priority: p }).then(() => this.host.focusCardIfShown(id));
		}
	}

	/** The New card form; the hub's refusal (a bad scope glob, a taken id) shows in the form. */
	async createCard(): Promise<void> {
		const { state, client } = this.host;
		const { known, preferred } = this.host.projects();
		let created: Card[] = [];
		await cardFormDialog(undefined, {
			phases: state.phases(),
			projects: known,
			project: preferred,
			submit: async r => {
				if (r.kind === 'create') {
					created = (await client.request('card/create', { cards: [r.input] })).cards;
				}
			},
		});
		for (const c of created) {
			this.host.queue(state.applyResult(c, state.eventSeqOf(c.id)));
		}
		const first = created[0];
		if (first !== undefined) {
			this.host.openDetail(first.id);
		}
	}

	async editCard(card: Card): Promise<void> {
		const r = await cardFormDialog(card, { phases: this.host.state.phases(), projects: this.host.projects().known });
		if (r?.kind !== 'update') {
			return;
		}
		const { cardId: _id, version: _v, ...patch } = r.params;
		await this.send(card.id, { method: 'card/update', params: r.params }, patch as Partial<Card>);
	}

	/** Links (`add`) or unlinks a dependency of a card from the detail pane; the hub's card is applied. */
	async link(cardId: string, dependsOn: string, add: boolean): Promise<void> {
		const { client, state } = this.host;
		const sentAt = state.eventSeqOf(cardId);
		const r = add
			? await client.request('card/link', { cardId, dependsOn })
			: await client.request('card/unlink', { cardId, dependsOn });
		this.host.queue(state.applyResult(r.card, sentAt));
	}

	/**
	 * Posts a message on a card. The card itself (needsInput lowered by a reply) arrives with the
	 * `commented` event: applying the answer here could drop an optimistic move of the same card.
	 */
	async comment(cardId: string, text: string): Promise<Message> {
		return (await this.host.client.request('card/comment', { cardId, text })).message;
	}

	/** Shows the change at once, sends it, and rolls it back if the hub refuses. */
	private async send(id: string, request: MoveRequest, optimistic: Partial<Card>): Promise<void> {
		const { state } = this.host;
		const sentAt = state.eventSeqOf(id);
		this.host.queue(state.optimistic(id, optimistic));
		try {
			const card = await this.sendMove(request);
			this.host.queue(card === undefined ? state.rollback(id) : state.applyResult(card, sentAt));
		} catch (e) {
			this.host.queue(state.rollback(id));
			if (request.method === 'card/reopen' && request.params.force !== true && BatonError.is(e, 'has_dependents')) {
				// Work built on it has started: say which, and reopen only when the user says so.
				const detail = `${e.message}\n\nForced, claimed dependents go back to the queue and done ones are flagged.`;
				if (await confirmDialog(`Reopen ${id} anyway?`, detail, 'Reopen anyway')) {
					await this.send(id, { method: 'card/reopen', params: { ...request.params, force: true } }, optimistic);
				}
				return;
			}
			this.host.showError(e);
		}
	}

	private async sendMove(request: MoveRequest): Promise<Card | undefined> {
		const { client } = this.host;
		switch (request.method) {
			case 'card/claim': {
				const r = await client.request('card/claim', request.params);
				if (r.card === null) {
					throw new BatonError('conflict', r.reason ?? `${request.params.cardId ?? 'The card'} could not be claimed.`);
				}
				return r.card;
			}
			case 'card/complete':
				return (await client.request('card/complete', request.params)).card;
			case 'card/block':
				return (await client.request('card/block', request.params)).card;
			case 'card/release':
				return (await client.request('card/release', request.params)).card;
			case 'card/reclaim':
				return (await client.request('card/reclaim', request.params)).cards[0];
			case 'card/unblock':
				return (await client.request('card/unblock', request.params)).card;
			case 'card/reopen':
				return (await client.request('card/reopen', request.params)).card;
			case 'card/update':
				return (await client.request('card/update', request.params)).card;
			case 'card/review':
				return (await client.request('card/review', request.params)).card;
		}
	}
}
