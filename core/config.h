/*
 * config.h - the core's parameter table (see config.c).
 */
#ifndef SB_CONFIG_H
#define SB_CONFIG_H

#include "param.h"
#include "sb.h"

extern const struct sb_param sb_core_params[];

#endif
