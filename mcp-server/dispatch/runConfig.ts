/**
 * What a `baton run` is configured with (the checked flags, cli/runCommand.ts) and which running agents
 * a pause covers. Types and one pure function: it starts, asks and reads nothing.
 */
import type { Card } from '../../core/protocol';
import type { SandboxChoice } from './sandbox';

export interface RunConfig {
	dataDir: string;
	name: string;
	seats: number;
	kind: string;
	agent: string | undefined;
	command: string | undefined;
	/** The claim's project: an id, '*' (any) or null (cards with none). */
	project: string | null;
	phase: string | undefined;
	capabilities: string[];
	maxSeconds: number | undefined;
	/** Stop an agent whose reported cost passes this many dollars, and fail its card (--max-cost-usd). */
	maxCostUsd?: number | undefined;
	/** Claim no new card once this run's agents reported spending this many dollars (--run-budget-usd). */
	runBudgetUsd?: number | undefined;
	/** Claim no new card while this many of the run's scope wait for review (--max-in-review). */
	maxInReview?: number | undefined;
	/** Stop an agent silent this long (no output, no call on its card) and fail its card; 0: never. */
	idleSeconds: number;
	cooldownSeconds: number;
	stopGraceMs: number;
	/** Each card's log is cut back to its tail past this size; 0: never. */
	logMaxBytes: number;
	/** The git checkout the run serves (claims' `root`, the agents' folder without workspaces). */
	root: string | undefined;
	/** Where agents run when the card has no workspace and there is no checkout. */
	cwd: string;
	batonMcp: { command: string; args: string[] };
	baseEnv: Record<string, string>;
	/** Agents run in bubblewrap, or plainly (then the run says the gate is advisory). */
	sandbox: SandboxChoice;
}

export interface PauseLike {
	scope: string;
	target: string | null;
	stop?: boolean;
}

export interface RunLike {
	name: string;
	host?: string;
	pid?: number;
	stopping?: 'drain' | 'stop' | null;
}

/** Whether a pause covers a dispatched card of `kind`. */
export function covers(pause: PauseLike, card: Card, kind: string): boolean {
	switch (pause.scope) {
		case 'all':
			return true;
		case 'project':
			return card.project === pause.target;
		case 'phase':
			return card.phase === pause.target;
		case 'card':
			return card.id === pause.target;
		case 'kind':
			return kind === pause.target;
		default:
			return false;
	}
}
