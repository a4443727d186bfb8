import { propertyFilterExprs, type Expr, type FilterContext } from '@tributary/hogql';
import type { StoredPropertyFilter } from '@tributary/property-filters';

/** Property filters of every type, as HogQL the printer resolves (person properties as at the event). */
export function propertyConditions(filters: readonly StoredPropertyFilter[], context: FilterContext): Expr[] {
  return propertyFilterExprs(filters, context);
}
