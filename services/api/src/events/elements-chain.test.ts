import { chainToElements } from './elements-chain.js';

describe('elements_chain as PostHog reads it', () => {
  it('gives each element its tag, classes, known attributes and order, the rest under attributes', () => {
    const chain = 'a.active.nav-link:attr__class="active nav-link"attr__href="/a"attr_id="nav"href="/a"nth-child="1"nth-of-type="2"text="Dashboards";li:nth-child="3"nth-of-type="3"';
    expect(chainToElements(chain)).toEqual([
      {
        text: 'Dashboards',
        tag_name: 'a',
        attr_class: ['active', 'nav-link'],
        href: '/a',
        attr_id: 'nav',
        nth_child: 1,
        nth_of_type: 2,
        attributes: { attr__class: 'active nav-link', attr__href: '/a' },
        order: 0,
      },
      { text: null, tag_name: 'li', attr_class: null, href: null, attr_id: null, nth_child: 3, nth_of_type: 3, attributes: {}, order: 1 },
    ]);
  });

  it('keeps ; and escaped quotes inside values, and a : inside a class name', () => {
    const [button, div] = chainToElements('button.hover:bg-red:nth-child="1"text="a;b \\"c\\"";div:nth-child="2"');
    expect(button).toMatchObject({ tag_name: 'button', attr_class: ['hover:bg-red'], nth_child: 1, text: 'a;b \\"c\\"' });
    expect(div).toMatchObject({ tag_name: 'div', attr_class: null, nth_child: 2, attributes: {}, order: 1 });
  });

  it('reads an empty chain as no elements', () => {
    expect(chainToElements('')).toEqual([]);
  });
});
