/**
 * The one index of globs by their literal leading folders (glob.ts `literalLead`), shared by the
 * conflict check (conflicts.ts: which held globs can meet this one) and the file matcher (match.ts:
 * which globs can match this path). A glob is filed at the node its lead spells out; two globs can
 * only meet when one's lead is a prefix of the other's, and a path only matches globs filed along its
 * folders. Pure; what a node holds is the caller's.
 */

export interface LeadNode<V> {
	readonly value: V;
	/** Made on the first child: most nodes are leaves (always present, so every node has one shape). */
	children: Map<string, LeadNode<V>> | undefined;
}

export class LeadTree<V> {
	readonly root: LeadNode<V>;

	constructor(private readonly make: () => V) {
		this.root = { value: make(), children: undefined };
	}

	/** The node `lead` spells out, made on the way. */
	at(lead: readonly string[]): LeadNode<V> {
		let node = this.root;
		for (const segment of lead) {
			node.children ??= new Map();
			let next = node.children.get(segment);
			if (next === undefined) {
				next = { value: this.make(), children: undefined };
				node.children.set(segment, next);
			}
			node = next;
		}
		return node;
	}

	/**
	 * The first value `found` returns something for, over every node whose glob can meet one with
	 * `lead`: the nodes along the lead (their leads are prefixes of it), then every node below it.
	 */
	find<R>(lead: readonly string[], found: (value: V) => R | undefined): R | undefined {
		let node: LeadNode<V> | undefined = this.root;
		for (let i = 0; ; i++) {
			const hit = found(node.value);
			if (hit !== undefined) {
				return hit;
			}
			const segment = lead[i];
			if (segment === undefined) {
				return below(node, found);
			}
			node = node.children?.get(segment);
			if (node === undefined) {
				return undefined;
			}
		}
	}
}

function below<V, R>(node: LeadNode<V>, found: (value: V) => R | undefined): R | undefined {
	for (const child of node.children?.values() ?? []) {
		const hit = found(child.value) ?? below(child, found);
		if (hit !== undefined) {
			return hit;
		}
	}
	return undefined;
}
