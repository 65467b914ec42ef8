/**
 * An agent as the extension's views show it. The rules behind `health` and `stalled` live in
 * core/health.ts, shared with the hub and the board; this file only shapes what the trees, the status
 * bar and the alerts read. Pure types and constants: no vscode, no clock reads.
 */
import type { Agent, AgentHealth, Card } from '../core/protocol';

/** An agent as the views show it: health and stalled recomputed for now (core/health.ts). */
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
