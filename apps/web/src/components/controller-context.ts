// The controller, for the components that send (so props stay about what is shown).
import { createContext, useContext } from 'react';
import type { ConsoleController } from '../console-controller.js';

export const ControllerContext = createContext<ConsoleController | undefined>(undefined);

export function useController(): ConsoleController {
  const controller = useContext(ControllerContext);
  if (controller === undefined) throw new Error('no ConsoleController above this component');
  return controller;
}
