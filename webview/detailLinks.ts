/**
 * The detail pane's "Epic and links" section: the epic the card is part of with its
 * progress, the card's own children (card/get's roll-up and list), its labels, and the links that do
 * not block: related, duplicates, discovered from. Each id opens that card in the pane. Text only,
 * never HTML; nothing is fetched here (the pane passes its card/get answer).
 */
import type { Card, Result } from '../core/protocol';
import { rollupText } from '../core/protocol/epicRollups';
import { refWord } from './columns';
import { section } from './detailLog';
import { button, el } from './dom';

/** The section, or undefined when the card has no parent, children, labels or links. */
export function linksSection(
	card: Card,
	got: Result<'card/get'> | undefined,
	open: (id: string) => void,
): HTMLElement | undefined {
	const dl = el('dl', 'facts links');
	const ids = (key: string, list: readonly string[] | null | undefined, titles?: (id: string) => string): void => {
		if (list == null || list.length === 0) {
			return;
		}
		const dd = el('dd', 'link-ids');
		for (const id of list) {
			const b = button(id, 'btn-link ref-open', () => open(id));
			b.setAttribute('aria-label', `Open ${id}${titles === undefined ? '' : `: ${titles(id)}`}`);
			dd.append(b, ' ');
		}
		dl.append(el('dt', '', key), dd);
	};
	const parent = got?.parent;
	ids('Part of', card.parent == null ? [] : [card.parent], () => parent?.title ?? '');
	if (parent !== undefined) {
		dl.lastElementChild?.append(el('span', 'muted', `${parent.title} · ${refWord(parent, Date.now())}`));
	}
	const children = got?.children;
	if (children !== undefined && children.total > 0) {
		const counts = [
			rollupText(children),
			...(['review', 'claimed', 'blocked', 'ready'] as const)
				.filter(k => children[k] > 0)
				.map(k => `${children[k]} ${k === 'claimed' ? 'in progress' : k === 'review' ? 'in review' : k}`),
		];
		dl.append(el('dt', '', 'Children'), el('dd', 'children-rollup', counts.join(' · ')));
		ids(
			'',
			children.cards.slice(0, 100).map(c => c.id),
			id => children.cards.find(c => c.id === id)?.title ?? '',
		);
	}
	if ((card.labels ?? []).length > 0) {
		const dd = el('dd', 'card-tags');
		dd.append(...(card.labels ?? []).map(l => el('span', 'tag tag-label', l)));
		dl.append(el('dt', '', 'Labels'), dd);
	}
	ids('Related', card.related);
	ids('Duplicates', card.duplicates);
	ids('Discovered from', card.discoveredFrom == null ? [] : [card.discoveredFrom]);
	if (dl.childElementCount === 0) {
		return undefined;
	}
	const s = section('Epic and links');
	s.body.append(dl);
	return s.root;
}
