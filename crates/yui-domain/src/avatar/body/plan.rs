//! Where a body action goes: the plan (activity, target position, spot, perch) worked out from
//! the action, the desktop now and the saved places, or the word the action answers without
//! moving.

use super::{Action, Avatar, Outcome};
use crate::avatar::geometry::{self as geo, Spot};
use crate::avatar::{Activity, Desktop, PerchRef};

impl Avatar {
    /// Where an action goes, or the word it answers without moving.
    pub(super) fn plan(
        &self,
        action: &Action,
        desk: &Desktop,
        size: (u32, u32),
    ) -> Result<Plan, Outcome> {
        let pos = self
            .body
            .as_ref()
            .and_then(|b| b.position())
            .unwrap_or((0, 0));
        let here = geo::monitor_of(&desk.monitors, geo::Rect::new(pos.0, pos.1, size.0, size.1))
            .cloned()
            .ok_or(Outcome::Unsupported)?;
        let plan = |activity, to| Plan {
            activity,
            to,
            spot: None,
            perch: None,
            perch_x: 0,
            side: None,
        };
        match action {
            Action::SitOnWindow { app } => {
                let found = geo::find_perches(desk, app);
                if found.is_empty() {
                    return Err(Outcome::NotFound);
                }
                let (i, to) = found
                    .iter()
                    .filter(|(i, _)| geo::perch_status(desk, *i, size).is_free())
                    .find_map(|(i, _)| sit_target(desk, *i, size, pos.0).map(|to| (*i, to)))
                    .ok_or(Outcome::Blocked)?;
                let w = &desk.windows[i];
                Ok(Plan {
                    perch: Some(perch_ref(w)),
                    perch_x: w.frame.x,
                    ..plan(Activity::Sitting, to)
                })
            }
            Action::Peek { side } => {
                let state = self.state();
                let perch = state.window.as_ref().and_then(|p| {
                    desk.windows
                        .iter()
                        .position(|w| w.id == p.id)
                        .filter(|_| matches!(state.state, Activity::Sitting | Activity::Peeking))
                });
                let (edge, y, perch) = match perch {
                    Some(i) => (
                        desk.windows[i].frame,
                        pos.1,
                        Some(perch_ref(&desk.windows[i])),
                    ),
                    None => (here.work_area, geo::floor_y(here.work_area, size), None),
                };
                Ok(Plan {
                    side: Some(*side),
                    perch,
                    ..plan(Activity::Peeking, geo::peek_position(edge, *side, size, y))
                })
            }
            Action::MoveTo { spot, monitor } => {
                let m = match monitor {
                    Some(n) => desk
                        .monitors
                        .iter()
                        .find(|m| m.number == *n)
                        .cloned()
                        .ok_or(Outcome::InvalidMonitor)?,
                    None => here.clone(),
                };
                let name = geo::normalize_spot(spot);
                let to = if let Some(s) = Spot::parse(spot) {
                    geo::spot_position(s, m.work_area, size)
                } else {
                    let places = self.places();
                    let saved = places
                        .spots
                        .iter()
                        .find(|(k, _)| geo::normalize_spot(k) == name)
                        .map(|(_, p)| *p)
                        .ok_or(Outcome::NotFound)?;
                    // A saved spot keeps its own monitor unless the call names one.
                    let m = match monitor {
                        Some(_) => m,
                        None => desk
                            .monitors
                            .iter()
                            .find(|x| x.number == saved.monitor)
                            .cloned()
                            .unwrap_or(m),
                    };
                    relative(&m, saved, size)
                };
                Ok(Plan {
                    spot: Some(name),
                    ..plan(Activity::Standing, to)
                })
            }
            Action::Stand => {
                let to = geo::clamp_to(
                    here.work_area,
                    size,
                    (pos.0, geo::floor_y(here.work_area, size)),
                );
                Ok(plan(Activity::Standing, to))
            }
            Action::GoToBed => {
                let bed = self.places().bed;
                let to = match bed.and_then(|b| {
                    desk.monitors
                        .iter()
                        .find(|m| m.number == b.monitor)
                        .map(|m| (m, b))
                }) {
                    Some((m, b)) => relative(m, b, size),
                    None => {
                        let m = desk.monitors.first().unwrap_or(&here);
                        geo::spot_position(Spot::BottomLeft, m.work_area, size)
                    }
                };
                Ok(plan(Activity::InBed, to))
            }
        }
    }
}

/// Where an action goes.
pub(super) struct Plan {
    pub activity: Activity,
    pub to: (i32, i32),
    pub spot: Option<String>,
    pub perch: Option<PerchRef>,
    /// The perch's left edge when planned.
    pub perch_x: i32,
    pub side: Option<geo::Side>,
}

pub(super) fn perch_ref(w: &geo::DesktopWindow) -> PerchRef {
    PerchRef {
        app: if w.class.is_empty() {
            w.instance.clone()
        } else {
            w.class.clone()
        },
        title: w.title.clone(),
        id: w.id,
    }
}

pub(super) fn sit_target(desk: &Desktop, i: usize, size: (u32, u32), x: i32) -> Option<(i32, i32)> {
    let w = &desk.windows[i];
    let m = geo::monitor_of(&desk.monitors, w.frame)?;
    geo::sit_position(w.frame, m.work_area, size, x)
}

/// A saved place on monitor `m`, kept inside its work area.
pub(super) fn relative(m: &geo::Monitor, p: crate::avatar::Place, size: (u32, u32)) -> (i32, i32) {
    geo::clamp_to(
        m.work_area,
        size,
        (m.work_area.x + p.x, m.work_area.y + p.y),
    )
}
