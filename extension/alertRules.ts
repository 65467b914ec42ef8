/**
 * Which fleet events deserve a VS Code notification, decided from the extension's live copy of the
 * cards and agents: a card that became "failed" (its attempts ran out, or its agent gave up on it),
 * and an agent that died while holding cards. Each is announced once, when it happens — not for what
 * was already so when the window connected — and again only after it was resolved and happened anew.
 * Pure: no vscode, no I/O, so it is tested under plain node.
 */
import type { AgentHealth, Card } from '../core/protocol';

export type FleetAlert =
	| { kind: 'cardFailed'; cardId: string; title: string; reason: string }
	| { kind: 'agentDied'; agentId: string; name: string; cardIds: string[] };

/** The slice of an agent view the rules read (hubConnection's AgentView has more). */
export interface AgentSnapshot {
	agent: { id: string; name: string };
	health: AgentHealth;
	cards: readonly { id: string }[];
}

export function isFailed(card: Card): boolean {
	return card.status === 'blocked' && card.failed === true;
}

export class AlertTracker {
	private failed: Set<string> | undefined;
	private dead: Set<string> | undefined;

	/** Forgets everything (a reconnect or another data dir): the next look is a new baseline. */
	reset(): void {
		this.failed = undefined;
		this.dead = undefined;
	}

	/** Alerts for cards that turned failed since the last look. */
	cards(cards: Iterable<Card>): FleetAlert[] {
		const now = new Set<string>();
		const alerts: FleetAlert[] = [];
		for (const card of cards) {
			if (!isFailed(card)) {
				continue;
			}
			now.add(card.id);
			if (this.failed !== undefined && !this.failed.has(card.id)) {
				alerts.push({ kind: 'cardFailed', cardId: card.id, title: card.title, reason: card.blockedReason ?? '' });
			}
		}
		this.failed = now;
		return alerts;
	}

	/** Alerts for agents that died holding cards since the last look. */
	agents(views: Iterable<AgentSnapshot>): FleetAlert[] {
		const now = new Set<string>();
		const alerts: FleetAlert[] = [];
		for (const view of views) {
			if (view.health !== 'dead' || view.cards.length === 0) {
				continue;
			}
			now.add(view.agent.id);
			if (this.dead !== undefined && !this.dead.has(view.agent.id)) {
				alerts.push({
					kind: 'agentDied',
					agentId: view.agent.id,
					name: view.agent.name,
					cardIds: view.cards.map(c => c.id),
				});
			}
		}
		this.dead = now;
		return alerts;
	}
}

/** The notification's sentence. */
export function alertText(alert: FleetAlert): string {
	if (alert.kind === 'cardFailed') {
		const reason = alert.reason.length > 160 ? `${alert.reason.slice(0, 159)}…` : alert.reason;
		return `Card ${alert.cardId} “${alert.title}” failed${reason === '' ? '' : `: ${reason}`}`;
	}
	const n = alert.cardIds.length;
	const listed = alert.cardIds.slice(0, 3).join(', ') + (n > 3 ? ` and ${n - 3} more` : '');
	return `Agent ${alert.name} stopped responding while holding ${n} card${n === 1 ? '' : 's'} (${listed}).`;
}
