import type { RouteDef } from '../route.js';
import { operationsRoutes } from './operations.js';

/** Every route of the API, by area. A new area adds its list here. */
export const allRoutes: RouteDef[] = [
  ...operationsRoutes,
] as RouteDef[];
