/* placeholder */
#include "sap/broadphase.h"
const vl_broadphase_ops vl_grid_ops;
