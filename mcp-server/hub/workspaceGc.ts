/**
 * Workspace clean-up for the hub: `workspace/gc` (the CLI's `baton gc`) and its safe part
 * in the hub's maintenance. It picks the repositories (the one named, else every project's repository
 * on this host), says which cards are live (they exist and are not done) and how old a WIP ref may get
 * (the project's wipDays), and runs workspaces/gc.ts: the plan is the dry run, and gc deletes exactly
 * the plan's items, each re-checked. Must not: delete what the plan did not list, force anything in
 * maintenance, or decide a rule of its own about what is safe (gc.ts does).
 */
import { hostname } from 'node:os';

import type { Backlog } from '../../core/backlog';
import { BatonError } from '../../core/errors';
import { createLogger, errorText } from '../../core/log';
import type { ParsedParams, ProjectSettings, Result } from '../../core/protocol';
import { gc, gcPlan } from '../workspaces/gc';
import { inspectRepo } from '../workspaces/repo';

const log = createLogger('hub').child('workspaceGc');

type GcReport = Result<'workspace/gc'>['repos'][number];

/** A repository to clean and the WIP age limit of the projects that use it (the smallest, so none keeps less). */
interface Target {
	root: string;
	projects: string[];
	wipDays: number;
}

const defaultWipDays = 30;

export class WorkspaceGc {
	private running: Promise<unknown> = Promise.resolve();

	constructor(
		private readonly backlog: Backlog,
		private readonly host: string = hostname(),
	) {}

	/** `workspace/gc`: plan (dryRun) or plan and delete, for each chosen repository. */
	run(p: ParsedParams<'workspace/gc'>): Promise<Result<'workspace/gc'>> {
		// One gc at a time in this hub: two plans at once would each report the other's deletions as skipped.
		const next = this.running.then(
			() => this.runNow(p),
			() => this.runNow(p),
		);
		this.running = next.catch(() => undefined);
		return next;
	}

	/** The maintenance pass: what gc deletes without --force, in every repository of this host. */
	async maintain(): Promise<void> {
		const r = await this.run({});
		log.debug(`maintenance gc went over ${r.repos.length} ${r.repos.length === 1 ? 'repository' : 'repositories'}`);
		for (const repo of r.repos) {
			if (repo.deleted.length > 0 || repo.skipped.length > 0) {
				log.info(
					`gc of ${repo.root}: deleted ${repo.deleted.map(i => `${i.kind} ${i.target}`).join(', ') || 'nothing'}` +
						(repo.skipped.length > 0 ? `; skipped ${repo.skipped.map(i => `${i.target} (${i.why})`).join(', ')}` : ''),
				);
			}
		}
	}

	private async runNow(p: ParsedParams<'workspace/gc'>): Promise<Result<'workspace/gc'>> {
		const repos: GcReport[] = [];
		for (const target of await this.targets(p)) {
			try {
				repos.push(await this.one(target, p.dryRun === true, p.force === true));
			} catch (e) {
				// A repository that moved or is broken must not stop the others (maintenance walks them all).
				if (p.root !== undefined || p.project !== undefined) {
					throw e;
				}
				log.warn(`gc skipped ${target.root}: ${errorText(e)}`);
			}
		}
		return { repos };
	}

	private async one(target: Target, dryRun: boolean, force: boolean): Promise<GcReport> {
		const plan = await gcPlan({
			repo: target.root,
			isCardLive: id => this.isLive(id),
			wipMaxAgeDays: target.wipDays,
			force,
		});
		const report: GcReport = {
			root: plan.root,
			projects: target.projects,
			items: plan.items,
			kept: plan.kept,
			deleted: [],
			skipped: [],
		};
		if (!dryRun && plan.items.length > 0) {
			const done = await gc(plan);
			report.deleted = done.deleted;
			report.skipped = done.skipped;
		}
		return report;
	}

	/** Live: the card exists and is not done (a done card's work is approved; landed or not is gc.ts's to check). */
	private async isLive(cardId: string): Promise<boolean> {
		try {
			const { card } = await this.backlog.get({ actor: 'hub:gc' }, { cardId });
			return card.status !== 'done';
		} catch (e) {
			if (BatonError.is(e, 'not_found')) {
				return false;
			}
			throw e;
		}
	}

	private async targets(p: ParsedParams<'workspace/gc'>): Promise<Target[]> {
		const all = await this.backlog.allProjectSettings();
		const wipDaysOf = (root: string, named?: ProjectSettings): Target => {
			const users = all.filter(s => s.roots[this.host] === root);
			const projects = [...new Set([...users.map(s => s.project), ...(named === undefined ? [] : [named.project])])];
			const days = [...users, ...(named === undefined ? [] : [named])].map(s => s.wipDays);
			return { root, projects, wipDays: days.length === 0 ? defaultWipDays : Math.min(...days) };
		};
		if (p.root !== undefined) {
			const root = (await inspectRepo(p.root)).root;
			const named = p.project === undefined ? undefined : await this.backlog.projectSettings(p.project);
			return [wipDaysOf(root, named)];
		}
		if (p.project !== undefined) {
			const settings = await this.backlog.projectSettings(p.project);
			const root = settings.roots[this.host];
			if (root === undefined) {
				throw new BatonError(
					'not_found',
					`Project ${p.project} has no repository on this machine (${this.host}). Run baton gc inside the repository, or baton settings --worktrees on there first.`,
					{ project: p.project, host: this.host },
				);
			}
			return [wipDaysOf(root, settings)];
		}
		const roots = [...new Set(all.map(s => s.roots[this.host]).filter((r): r is string => r !== undefined))];
		return roots.sort().map(root => wipDaysOf(root));
	}
}
