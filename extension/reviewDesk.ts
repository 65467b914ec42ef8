/**
 * Notifications of the review desk: a card entered review (Open / Approve, and Changes
 * for a card with a workspace: its branch in the multi-file diff editor) or an agent
 * asked a question (Open / Reply, with the question's text). What is new is reviewQueue.ts's to
 * decide; this module only looks at the cards at most once a second, so a burst (a plan's worth of
 * completions) becomes one notification per kind, and shows them. Off with the setting
 * `baton.notifications.review`. Never changes a card: the buttons run the commands.
 */
import * as vscode from 'vscode';
import { visibleText } from '../core/visibleText';
import type { Card } from '../core/protocol';
import { commandIds } from './commands/ids';
import type { HubConnection } from './hubConnection';
import { DeskTracker, questionNewsText, reviewNewsText } from './reviewQueue';

/** How long changes are gathered before one look: bursts become one notification. */
const settleMs = 1_000;

export class ReviewDesk implements vscode.Disposable {
	private readonly tracker = new DeskTracker();
	private readonly disposables: vscode.Disposable[];
	private pending: ReturnType<typeof setTimeout> | undefined;
	/** The last notifications shown, newest last (the tests read them). */
	readonly shown: string[] = [];

	constructor(private readonly hub: HubConnection) {
		this.disposables = [
			hub.onDidChangeCards(change => {
				if (change.reset) {
					// A (re)connect: what is there now is the baseline, never announced.
					clearTimeout(this.pending);
					this.pending = undefined;
					this.tracker.reset();
					this.tracker.look(hub.cards.values(), hub.me);
					return;
				}
				this.pending ??= setTimeout(() => {
					this.pending = undefined;
					this.look();
				}, settleMs);
			}),
		];
	}

	private look(): void {
		const news = this.tracker.look(this.hub.cards.values(), this.hub.me);
		if (!vscode.workspace.getConfiguration('baton').get<boolean>('notifications.review', true)) {
			return;
		}
		const [review] = news.reviews;
		if (review) {
			this.show(reviewNewsText(news.reviews), news.reviews.length === 1 ? review : undefined, 'Approve');
		}
		const [question] = news.questions;
		if (question) {
			if (news.questions.length > 1) {
				this.show(questionNewsText(news.questions), undefined, 'Reply');
			} else {
				void this.askedText(question).then(asked =>
					this.show(questionNewsText(news.questions, asked), question, 'Reply'),
				);
			}
		}
	}

	/** The question's sender and text, for the one card's notification (undefined if it cannot be read). */
	private async askedText(card: Card): Promise<{ from: string; text: string } | undefined> {
		try {
			const { messages } = await this.hub.request('card/get', { cardId: card.id });
			return [...messages].reverse().find(m => m.question);
		} catch {
			return undefined;
		}
	}

	/** One card: Open and `act` on it. Several: `act` takes the next (the commands' pickers list them all). */
	private show(text: string, card: Card | undefined, act: 'Approve' | 'Reply'): void {
		this.shown.push(text);
		this.shown.splice(0, this.shown.length - 20);
		const command = act === 'Approve' ? commandIds.approveCard : commandIds.replyToAgent;
		if (!card) {
			const next = act === 'Approve' ? 'Review Next' : 'Reply';
			void vscode.window.showInformationMessage(visibleText(text), next).then(choice => {
				if (choice !== undefined) {
					void vscode.commands.executeCommand(act === 'Approve' ? commandIds.reviewNextCard : command);
				}
			});
			return;
		}
		// A card with a workspace has a branch to read before approving it.
		const changes = act === 'Approve' && card.workspace !== undefined ? ['Changes'] : [];
		void vscode.window.showInformationMessage(visibleText(text), 'Open', ...changes, act).then(choice => {
			if (choice === 'Open') {
				void vscode.commands.executeCommand(commandIds.showCardDetail, card.id);
			} else if (choice === 'Changes') {
				void vscode.commands.executeCommand(commandIds.openChanges, card.id);
			} else if (choice === act) {
				void vscode.commands.executeCommand(command, card.id);
			}
		});
	}

	dispose(): void {
		clearTimeout(this.pending);
		for (const d of this.disposables) {
			d.dispose();
		}
	}
}
