/** An autocaptured element as PostHog's events API answers it (its `ElementSerializer` fields). */
export interface ChainElement {
  text: string | null;
  tag_name: string | null;
  attr_class: string[] | null;
  href: string | null;
  attr_id: string | null;
  nth_child: number | null;
  nth_of_type: number | null;
  attributes: Record<string, string>;
  order: number;
}

// PostHog's own patterns (`posthog/models/element/element.py`), so a chain reads the same here,
// quirks included: values keep their escaped quotes, and an empty value is not an attribute.
/** Elements are separated by `;`, except inside quoted values. */
const ELEMENT = /(?:[^\s;"]|"(?:\\.|[^"])*")+/g;
/** Tag and classes, then the attributes from the first `:key=`; a class may itself hold a `:`. */
const TAG_AND_ATTRIBUTES = /^(.*?)($|:([a-zA-Z\-_0-9]*=.*))/;
const ATTRIBUTE = /(.*?)="(.*?[^\\])"/g;

function integer(value: string): number | null {
  const n = Number.parseInt(value, 10);
  return Number.isNaN(n) ? null : n;
}

function parseElement(source: string, order: number): ChainElement {
  const element: ChainElement = { text: null, tag_name: null, attr_class: null, href: null, attr_id: null, nth_child: null, nth_of_type: null, attributes: {}, order };
  const [, tagPart = '', , attributes = ''] = TAG_AND_ATTRIBUTES.exec(source) ?? [];
  if (tagPart) {
    const dot = tagPart.indexOf('.');
    element.tag_name = dot === -1 ? tagPart : tagPart.slice(0, dot);
    if (dot !== -1) element.attr_class = tagPart.slice(dot + 1).split('.').filter((c) => c !== '');
  }
  for (const [, key = '', value = ''] of attributes.matchAll(ATTRIBUTE)) {
    if (key === 'href') element.href = value;
    else if (key === 'nth-child') element.nth_child = integer(value);
    else if (key === 'nth-of-type') element.nth_of_type = integer(value);
    else if (key === 'text') element.text = value;
    else if (key === 'attr_id') element.attr_id = value;
    else if (key) element.attributes[key] = value;
  }
  return element;
}

/** An event's `elements_chain` as its elements, innermost (the one acted on) first. */
export function chainToElements(chain: string): ChainElement[] {
  return [...chain.matchAll(ELEMENT)].map((match, order) => parseElement(match[0], order));
}
