/**
 * An agent as the extension's views show it. The rules behind `health` and `stalled` live in
 * core/rules/health.ts, shared with the hub and the board; this file only shapes what the trees, the status
 * bar and the alerts read, and derives it from an agent list and the cards (agentViewsOf). Pure: no
 * vscode, no clock reads (`now` is passed in).
 */
import { agentHealth, isAgentStalled } from '../core/rules/health';
import type { Agent, AgentHealth, Card, HealthThresholds } from '../core/protocol';

/** An agent as the views show it: health and stalled recomputed for now (core/rules/health.ts). */
export interface AgentView {
	agent: Agent;
	health: AgentHealth;
	stalled: boolean;
	/** Cards this agent holds, as far as this window knows them. */
	cards: Card[];
	/** Seconds since the hub last heard from it. */
	ageSeconds: number;
}

export const healthRank: Record<AgentHealth, number> = { healthy: 0, late: 1, stale: 2, dead: 3 };

/**
 * Agents with health and stalled derived for `now` (core/rules/health.ts) and the claimed cards each holds
 * among `cards`, most recently seen first.
 */
export function agentViewsOf(
	agents: readonly Agent[],
	cards: Iterable<Card>,
	t: HealthThresholds,
	now: number,
): AgentView[] {
	const held = new Map<string, Card[]>();
	for (const card of cards) {
		if (card.status === 'claimed' && card.claimOwner !== null) {
			const list = held.get(card.claimOwner) ?? [];
			list.push(card);
			held.set(card.claimOwner, list);
		}
	}
	return agents
		.map(agent => {
			const health = agentHealth(agent.lastSeenAt, now, t);
			const cards = held.get(agent.id) ?? [];
			return {
				agent,
				health,
				stalled: isAgentStalled(health, cards, now, t),
				cards,
				ageSeconds: Math.max(0, (now - Date.parse(agent.lastSeenAt)) / 1000),
			};
		})
		.sort((a, b) => a.ageSeconds - b.ageSeconds || a.agent.id.localeCompare(b.agent.id));
}
