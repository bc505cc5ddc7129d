/* sensim/sensim.h - the umbrella header: every public header of libsensim. */
#ifndef SENSIM_SENSIM_H
#define SENSIM_SENSIM_H

#include "sensim/afile.h"
#include "sensim/allan.h"
#include "sensim/camera.h"
#include "sensim/csv.h"
#include "sensim/geodesy.h"
#include "sensim/gnss.h"
#include "sensim/gnssfit.h"
#include "sensim/gtcursor.h"
#include "sensim/imu.h"
#include "sensim/imufit.h"
#include "sensim/judge.h"
#include "sensim/lidar.h"
#include "sensim/lidar_fit.h"
#include "sensim/linalg.h"
#include "sensim/log.h"
#include "sensim/metrics.h"
#include "sensim/odometer.h"
#include "sensim/plot.h"
#include "sensim/png.h"
#include "sensim/pointcloud.h"
#include "sensim/ptc.h"
#include "sensim/render.h"
#include "sensim/rig.h"
#include "sensim/rng.h"
#include "sensim/status.h"
#include "sensim/trajectory.h"
#include "sensim/units.h"
#include "sensim/yaml.h"

#endif
